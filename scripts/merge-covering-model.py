#!/usr/bin/env python3
"""A pixel-level model of the GPU merge's pair rules (cuda/itkCCAFlslMerge.cuh): the overlapping and diagonal pairs of
a row and its preceding neighbor rows, the overlapping pairs that CoveringNeighborRows() covers skipped, united by a
plain union-find, against scipy.ndimage.label on random volumes at every connectivity. With diagonal covering on, the
diagonal pairs covered at the neighbor run's pixel are skipped too: the rule written out in docs/performance.md, tried
in the kernel and not kept (fewer unions, yet slower on most images). It checks the rules, not the kernel (the GPU suites do
that), and prints how many unions each makes.

    python3 scripts/merge-covering-model.py [seed] [volumes]
"""
import sys

import numpy as np
import scipy.ndimage as ndi

rng=np.random.default_rng(int(sys.argv[1]) if len(sys.argv)>1 else 0)
def label_sim(img, conn, diagcover=True):
    Z,Y,X=img.shape
    runid=-np.ones(img.shape,int); parent=[]
    for z in range(Z):
        for y in range(Y):
            for x in range(X):
                if img[z,y,x]:
                    if x>0 and img[z,y,x-1]: runid[z,y,x]=runid[z,y,x-1]
                    else: runid[z,y,x]=len(parent); parent.append(len(parent))
    def find(a):
        while parent[a]!=a: a=parent[a]
        return a
    def unite(a,b):
        a,b=find(a),find(b)
        if a!=b: parent[max(a,b)]=min(a,b)
    joins=lambda k: k<=conn  # conn 1 face, 2 edge(18), 3 full(26)
    offs=[]
    for dy,dz in [(-1,0),(0,-1),(-1,-1),(1,-1)]:
        nz=(dy!=0)+(dz!=0)
        if joins(nz): offs.append((dy,dz,joins(nz+1)))
    idx={(o[0],o[1]):i for i,o in enumerate(offs)}
    cov=[-1,-1]; coveredBy=[0]*len(offs)
    if (0,-1) in idx and (-1,0) in idx and joins(2):
        cov=[idx[(0,-1)],idx[(-1,0)]]
        for n,o in enumerate(offs):
            if n!=cov[0]: coveredBy[n]|=1
            if (o[0],o[1])==(-1,-1): coveredBy[n]|=2
    def fg(z,y,x): return 0<=z<Z and 0<=y<Y and 0<=x<X and img[z,y,x]
    skipped=0; made=0
    for z in range(Z):
        for y in range(Y):
            for n,(dy,dz,wid) in enumerate(offs):
                ny,nz=y+dy,z+dz
                if not(0<=ny<Y and 0<=nz): continue
                def covered(xp):
                    r=False
                    for k in range(2):
                        if coveredBy[n]&(1<<k):
                            cdy,cdz=offs[cov[k]][0],offs[cov[k]][1]
                            if fg(z+cdz,y+cdy,xp): r=True
                    return r
                for x in range(X):
                    c=img[z,y,x]; nb=img[nz,ny,x]
                    cs=c and not fg(z,y,x-1); ns=nb and not fg(nz,ny,x-1)
                    if c and nb and (cs or ns):
                        if covered(x): skipped+=1
                        else: unite(runid[z,y,x],runid[nz,ny,x]); made+=1
                    if wid:
                        ce=c and not fg(z,y,x+1)
                        if ce and (not nb) and fg(nz,ny,x+1):
                            if diagcover and covered(x+1): skipped+=1
                            else: unite(runid[z,y,x],runid[nz,ny,x+1]); made+=1
                        if cs and (not nb) and fg(nz,ny,x-1):
                            if diagcover and covered(x-1): skipped+=1
                            else: unite(runid[z,y,x],runid[nz,ny,x-1]); made+=1
    lab=np.zeros(img.shape,int)
    m=runid>=0
    lab[m]=[find(r)+1 for r in runid[m]]
    return lab,made,skipped
def same_partition(a,b):
    m=a>0
    if not np.array_equal(m,b>0): return False
    pa=a[m]; pb=b[m]
    return len(set(zip(pa,pb)))==len(set(pa))==len(set(pb))
bad=0;tot=0;mk=[0,0];sk=0
for t in range(int(sys.argv[2]) if len(sys.argv)>2 else 300):
    shape=tuple(rng.integers(1,9,3)); d=rng.uniform(0.2,0.9)
    img=rng.random(shape)<d
    for conn in (1,2,3):
        ref,_=ndi.label(img,ndi.generate_binary_structure(3,conn))
        lab,made,s=label_sim(img,conn)
        lab0,made0,_=label_sim(img,conn,False)
        if not same_partition(lab0,ref): bad+=1; print("MISMATCH (overlaps covered)",shape,d,conn)
        tot+=1; mk[0]+=made0; mk[1]+=made; sk+=s
        if not same_partition(lab,ref): bad+=1; print("MISMATCH",shape,d,conn)
print("cases", tot, "mismatches (either rule)", bad, "unions: overlaps covered", mk[0], "diagonals covered too", mk[1])
