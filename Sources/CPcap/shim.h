#include <pcap/pcap.h>
#include <stdio.h>
#include <stdio_ext.h>
