#!/usr/bin/env python3
# Measures how often random bytes, printable text, lowercase letters and zero-heavy bytes of a
# given length parse as protobuf wire data (the check framescope makes of varint-framed bodies).
# BoundaryEvidence.protobufBody(length:) is -log2 of the highest of these odds, less one bit.
# usage: scripts/protobuf-odds.py   (2x10^5 samples per length; takes a few minutes)
import random, math
def valid(b):
    n=len(b); i=0
    def varint():
        nonlocal i
        v=0; s=0
        while i<n:
            x=b[i]; i+=1; v|=(x&0x7f)<<s; s+=7
            if x<0x80: return v
            if s>=70: return None
        return None
    while i<n:
        t=varint()
        if t is None: return False
        if t>>3==0: return False
        wt=t&7
        if wt==0:
            if varint() is None: return False
        elif wt in (1,5):
            sz=8 if wt==1 else 4
            if n-i<sz: return False
            i+=sz
        elif wt==2:
            l=varint()
            if l is None or l>n-i: return False
            i+=l
        elif wt in (3,4): return None
        else: return False
    return True
R=random.Random(1)
N=int(__import__("os").environ.get("SAMPLES", 200000))
for L in [1,2,3,4,5,6,8,10,12,16,20,24,32,48,64,96,128,256]:
    res=[]
    for kind in ('bytes','text','lower','zeroish'):
        c=0
        for _ in range(N):
            if kind=='bytes': b=bytes(R.getrandbits(8) for _ in range(L))
            elif kind=='text': b=bytes(R.randint(0x20,0x7e) for _ in range(L))
            elif kind=='lower': b=bytes(R.randint(0x61,0x7a) for _ in range(L))
            else: b=bytes(R.choice([0,0,0,1,2,0x7f,0x80,0xff]) for _ in range(L))
            if valid(b) is True: c+=1
        res.append(c)
    p=max(res)/N
    print(L, res, "bits", round(-math.log2(max(p,1/N)),1))
