# The ITK-free part of the module's library, written once for its two builds: the ITK module (src/) and the
# Python package (python/, no ITK): the engine facade, both engines, the component selection and the shape
# attributes. Paths relative to the project root (CCA_ROOT); CCA_WITH_CUDA comes from itk-module-init.cmake.
set(CCA_ENGINE_SOURCES
  # the core: the facade, the engine interface and request checks, the post-processing's decision, the host threads
  src/core/itkCudaConnectedComponentAnalysisEngine.cxx
  src/core/itkCudaConnectedComponentAnalysisEnums.cxx
  src/core/itkCCAEngine.cxx
  src/core/itkCCAEngineChoice.cxx
  src/core/itkCCAComponentSelection.cxx
  src/core/itkCCAWorkerPool.cxx
  # the attributes: their table and formulas, from the engines' sums
  src/attributes/itkCCAAttributes.cxx
  src/attributes/itkCCAShapeAttributes.cxx
  src/attributes/itkCCAIntensityStatistics.cxx
  # the CPU engine
  src/cpu/itkCCACPUEngine.cxx
  src/cpu/itkCCACPUEngineLabeling.cxx
  src/cpu/itkCCACPUEngineFeatures.cxx
  src/cpu/itkCCACPUEngineIntensity.cxx
  src/cpu/itkCCACPUEngineLines.cxx
  src/cpu/itkCCAValueTolerance.cxx
  src/cpu/itkCCAContacts.cxx
  # slabs: an image too large for one analysis, over either engine
  src/slab/itkCCASlabEngine.cxx
  src/slab/itkCCASlabFaces.cxx
  )
if(CCA_WITH_CUDA)
  list(APPEND CCA_ENGINE_SOURCES
    cuda/itkCCACudaEngine.cu
    cuda/itkCCACudaEngineSmallImage.cu
    cuda/itkCCASmallImageAnalysis.cu
    cuda/itkCCACudaDevices.cu
    cuda/itkCCACudaStages.cu
    cuda/itkCCAMultiLabelStages.cu
    cuda/itkCCAValueToleranceStages.cu
    cuda/itkCCAContactStages.cu
    cuda/itkCCAIntensityStages.cu
    cuda/itkCCABasicColumns.cu
    cuda/itkCCARunGrouping.cu
    cuda/itkCCAPinnedStaging.cu
    cuda/itkCCAFeatureVariantConflictDetection.cu
    )
else()
  list(APPEND CCA_ENGINE_SOURCES src/core/itkCCANoCudaEngine.cxx)
endif()
list(TRANSFORM CCA_ENGINE_SOURCES PREPEND "${CCA_ROOT}/")
# The internal headers, by layer (none of them installed): what the engines, the tests and the benchmark include.
# A cache entry, so that test/ and examples/ (sibling folders of src/) see it too.
set(CCA_INTERNAL_INCLUDE_DIRS ${CCA_ROOT}/src/core ${CCA_ROOT}/src/attributes ${CCA_ROOT}/src/cpu
  ${CCA_ROOT}/src/slab ${CCA_ROOT}/cuda CACHE INTERNAL "the internal headers' folders")

find_package(Threads REQUIRED)

# A C++ runtime linked statically must stay private to the library that carries it. Some toolchains have no
# shared libstdc++ (a GCC built with --disable-shared, e.g. one installed under /opt): their g++ links
# libstdc++.a into every shared library without a word. Exported, that copy's symbols meet the process's own
# libstdc++.so.6 (loaded by numpy, ITK, ...): the dynamic linker binds the STB_GNU_UNIQUE ones (the facets'
# locale::id, among others) across both copies, each copy keeps its own locale tables, and the first stream
# that formats a number takes a facet from the wrong table and crashes (docs/building.md, "Toolchains").
# --exclude-libs,ALL makes every symbol that comes from a static archive (libstdc++.a, libcudart_static.a,
# our own engine archive) local to the shared library, so a static copy is used by this library alone.
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
  OUTPUT_VARIABLE CCA_LIBSTDCXX_SO OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT IS_ABSOLUTE "${CCA_LIBSTDCXX_SO}")
  message(STATUS "CudaConnectedComponentAnalysis: ${CMAKE_CXX_COMPILER} has no shared libstdc++: it is linked "
                 "statically and kept local to each shared library (--exclude-libs)")
endif()
# cca_private_static_runtime(target): for a shared library or module on an ELF platform with a GNU-style linker.
function(cca_private_static_runtime target)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL")
  endif()
endfunction()
# What every target built from engine sources shares: the internal headers (CCA_INTERNAL_INCLUDE_DIRS: both
# engines' src/core/itkCCARunMath.h, the kernels of cuda/, ...), position-independent code, and with CUDA the statically linked
# runtime (one library, and one Python wheel, runs with and without a GPU; without a driver or device the
# automatic backend says so and uses its CPU engine) and nvcc's options.
function(cca_engine_target target)
  target_include_directories(${target} PRIVATE ${CCA_INTERNAL_INCLUDE_DIRS})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${target} PRIVATE Threads::Threads)
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "SHARED_LIBRARY" OR _type STREQUAL "MODULE_LIBRARY")
    cca_private_static_runtime(${target})
  endif()
  # No fused multiply-adds on the host either (GCC fuses a*b+c by default in GNU mode where the target has FMA):
  # the shape attributes match ITK's bits, and the basic columns the device's (itkCCABasicAttributes.h), also
  # where the host code of a .cu file computes them (the small-image path's columns).
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>
                                             $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-ffp-contract=off>)
  endif()
  if(CCA_WITH_CUDA)
    target_compile_definitions(${target} PRIVATE CCA_WITH_CUDA=1)
    target_link_libraries(${target} PRIVATE CUDA::cudart_static)
    set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
  endif()
endfunction()

# cca_add_engine_library(target): the engines and facade as a static library with no ITK, for builds that
# have no ITK module library (the Python package, the ITK-free engine test): the module's export header as
# an empty macro, hidden symbols.
function(cca_add_engine_library target)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/include/CudaConnectedComponentAnalysisExport.h
    "// Generated by CMake/CudaConnectedComponentAnalysisEngineSources.cmake: a static library, nothing to export.\n"
    "#ifndef CudaConnectedComponentAnalysis_EXPORT\n#define CudaConnectedComponentAnalysis_EXPORT\n#endif\n")
  add_library(${target} STATIC ${CCA_ENGINE_SOURCES})
  target_include_directories(${target} PUBLIC
    ${CCA_ROOT}/include ${CCA_ROOT}/src/types ${CMAKE_CURRENT_BINARY_DIR}/include)
  cca_engine_target(${target})
  set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden)
endfunction()
