// Throwaway experiment behind cuda/itkCCAPinnedStaging.cuh's lane and chunk sizes (not built by the project):
// nvcc -O2 -std=c++17 -arch=sm_90 -o staging-lanes h100-2026-11-23e-staging-lanes.cu
// Experiment: D2H of a 268 MB label buffer into a fresh (never touched) host buffer.
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>
#include <algorithm>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
using Clock = std::chrono::steady_clock;
static double sec(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
#define CK(x) do { cudaError_t ck_ = (x); if (ck_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(ck_)); exit(1);} } while (0)
size_t Chunk = size_t{4} << 20;
struct Lane { cudaStream_t s; void* h[2]; size_t cap=0; cudaEvent_t ev[2]; };
std::vector<Lane> lanes;
void initLanes(unsigned n) { lanes.resize(n); for (auto& l : lanes) { CK(cudaStreamCreateWithFlags(&l.s, cudaStreamNonBlocking)); for (int i=0;i<2;++i){ CK(cudaMallocHost(&l.h[i], Chunk)); CK(cudaEventCreateWithFlags(&l.ev[i], cudaEventDisableTiming)); } } }
template <class F> void par(unsigned n, F f) { std::vector<std::thread> t; for (unsigned i=0;i<n;++i) t.emplace_back(f, i); for (auto& x : t) x.join(); }
void toHost(char* host, const char* dev, size_t bytes, unsigned nl) {
  size_t slice = (bytes + nl - 1) / nl;
  par(nl, [&](unsigned li) {
    Lane& l = lanes[li]; size_t b = li*slice, e = std::min(bytes, b+slice); if (b>=e) return;
    size_t chunks = (e-b+Chunk-1)/Chunk;
    auto enq = [&](size_t i){ int s=i%2; size_t o=b+i*Chunk; CK(cudaMemcpyAsync(l.h[s], dev+o, std::min(Chunk,e-o), cudaMemcpyDeviceToHost, l.s)); CK(cudaEventRecord(l.ev[s], l.s)); };
    enq(0);
    for (size_t i=0;i<chunks;++i){ if(i+1<chunks) enq(i+1); int s=i%2; size_t o=b+i*Chunk; CK(cudaEventSynchronize(l.ev[s])); memcpy(host+o, l.h[s], std::min(Chunk,e-o)); }
  });
}
void toDevice(char* dev, const char* host, size_t bytes, unsigned nl) {
  size_t slice = (bytes + nl - 1) / nl;
  par(nl, [&](unsigned li) {
    Lane& l = lanes[li]; size_t b = li*slice, e = std::min(bytes, b+slice);
    for (size_t o=b,i=0;o<e;o+=Chunk,++i){ int s=i%2; size_t n=std::min(Chunk,e-o); CK(cudaEventSynchronize(l.ev[s])); memcpy(l.h[s], host+o, n); CK(cudaMemcpyAsync(dev+o, l.h[s], n, cudaMemcpyHostToDevice, l.s)); CK(cudaEventRecord(l.ev[s], l.s)); }
    CK(cudaStreamSynchronize(l.s));
  });
}
void prefault(char* p, size_t bytes, unsigned nt, bool populate) {
  size_t slice = ((bytes + nt - 1) / nt + 4095) & ~size_t(4095);
  par(nt, [&](unsigned t) { size_t b=t*slice, e=std::min(bytes,b+slice); if (b>=e) return;
    if (populate) { uintptr_t a = (reinterpret_cast<uintptr_t>(p+b)+4095)&~uintptr_t(4095); uintptr_t z=reinterpret_cast<uintptr_t>(p+e)&~uintptr_t(4095); if (z>a && madvise((void*)a, z-a, MADV_POPULATE_WRITE)!=0) { static bool once=false; if(!once){perror("populate"); once=true;} } }
    else for (size_t o=b;o<e;o+=4096) p[o]=0; });
}
void hugeAdvise(char* p, size_t bytes) {
  uintptr_t a=(reinterpret_cast<uintptr_t>(p)+(2u<<20)-1)&~uintptr_t((2u<<20)-1); uintptr_t z=reinterpret_cast<uintptr_t>(p+bytes)&~uintptr_t((2u<<20)-1);
  if (z>a && madvise((void*)a, z-a, MADV_HUGEPAGE)!=0) perror("madvise");
}
long minflt() { rusage r; getrusage(RUSAGE_SELF,&r); return r.ru_minflt; }
int main() {
  for (auto f : {"/sys/kernel/mm/transparent_hugepage/enabled","/sys/kernel/mm/transparent_hugepage/defrag","/sys/kernel/mm/transparent_hugepage/khugepaged/defrag"}) { std::ifstream i(f); std::string s; std::getline(i,s); printf("%s: %s\n", f, s.c_str()); }
  printf("cores %u\n", std::thread::hardware_concurrency());
  const size_t bytes = size_t{8192}*8192*4;
  char* dev; CK(cudaMalloc(&dev, bytes)); CK(cudaMemset(dev, 1, bytes));
  initLanes(16);
  void* pinned; CK(cudaMallocHost(&pinned, bytes));
  for (int r=0;r<3;++r){ auto t=Clock::now(); CK(cudaMemcpy(pinned, dev, bytes, cudaMemcpyDeviceToHost)); printf("pinned D2H %.2f ms\n", sec(t)*1e3);}
  const size_t inBytes = size_t{8192}*8192;
  char* src = new char[inBytes]; memset(src, 1, inBytes);
  for (int r=0;r<3;++r) { char* h = new char[bytes]; auto t=Clock::now(); toHost(h, dev, bytes, 8); double tc=sec(t); printf("D2H fresh no advice 4MB lanes 8: %6.2f ms\n", tc*1e3); delete[] h; }
  { char* h = new char[bytes]; memset(h,0,bytes); for (int r=0;r<3;++r) { auto t=Clock::now(); toHost(h, dev, bytes, 8); double tc=sec(t); printf("D2H touched 4MB lanes 8: %6.2f ms\n", tc*1e3);} delete[] h; }
  for (size_t chunkMB : {4, 2}) { Chunk = chunkMB << 20;
   for (unsigned nl : {8u, 12u, 16u}) {
    for (int r=0;r<4;++r) { char* h = new char[bytes]; hugeAdvise(h, bytes); auto t=Clock::now(); toHost(h, dev, bytes, nl); double tc=sec(t); printf("D2H fresh huge chunk %zu MB lanes %2u: %6.2f ms (%5.1f GB/s)\n", chunkMB, nl, tc*1e3, bytes/tc/1e9); delete[] h; }
    for (int r=0;r<4;++r) { auto t=Clock::now(); toDevice(dev, src, inBytes, nl); double tc=sec(t); printf("H2D touched 67MB chunk %zu MB lanes %2u: %6.2f ms (%5.1f GB/s)\n", chunkMB, nl, tc*1e3, inBytes/tc/1e9); }
   }
  }
}
