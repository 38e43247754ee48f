#include <pcap/pcap.h>
#include <stdio.h>
