# Included before the module is configured (by ITK for a module inside its source tree, by the top-level
# CMakeLists.txt otherwise): decides whether the CUDA engine is built, as ITKCudaCommon and RTK do.
# CUDA is optional: without a CUDA compiler the module is a CPU-only build, said once here.
option(CCA_ENABLE_CUDA "Build the CUDA engine when a CUDA compiler is found" ON)
set(CCA_WITH_CUDA OFF)
if(CCA_ENABLE_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Default targets: Turing SASS, Ampere SASS (runs on 8.x), Hopper SASS + PTX (JIT for newer GPUs).
    # CMAKE_CUDA_ARCHITECTURES or the CUDAARCHS environment variable override this.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
      set(CMAKE_CUDA_ARCHITECTURES "75-real;80-real;90")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CCA_WITH_CUDA ON)
    message(STATUS "CudaConnectedComponentAnalysis: CUDA engine ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                   "architectures ${CMAKE_CUDA_ARCHITECTURES})")
  else()
    message(WARNING "CudaConnectedComponentAnalysis: no CUDA compiler found -- CPU-only build "
                    "(the filter runs on its CPU engine; set CMAKE_CUDA_COMPILER to build the CUDA engine).")
  endif()
else()
  message(STATUS "CudaConnectedComponentAnalysis: CCA_ENABLE_CUDA=OFF -- CPU-only build.")
endif()
