#!/usr/bin/env python3
"""The per-kernel times (us) of an ncu --print-summary per-kernel output, kernels of 20 us or more, and the total."""
import sys,re
txt=open(sys.argv[1]).read()
blocks=re.split(r"\n  (?=\S)", txt)
tot=0
for b in blocks:
    m=re.search(r"gpu__time_duration\.sum\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)",b)
    if m:
        name=b.split("\n")[0]
        name=re.sub(r"itk::(<unnamed>::)?|\(.*","",name)[:40]
        unit=m.group(1); v=float(m.group(3).replace(",",""))
        us = v/1000 if unit=="ns" else v if unit=="us" else v*1000 if unit=="ms" else v
        tot+=us
        if us>20: print(f"{us:9.1f} us  {name}")
print(f"{tot:9.1f} us total")
