# The ITK-free part of the module's library, written once for its two builds: the ITK module (src/) and the
# Python package (python/, no ITK): the engine facade, both engines, the component selection and the shape
# attributes. Paths relative to the project root (CCA_ROOT); CCA_WITH_CUDA comes from itk-module-init.cmake.
set(CCA_ENGINE_SOURCES
  src/itkCudaConnectedComponentAnalysisEngine.cxx
  src/itkCCAShapeAttributes.cxx
  src/itkCCAIntensityStatistics.cxx
  src/itkCCAComponentSelection.cxx
  src/itkCCAEngine.cxx
  src/itkCCACPUEngine.cxx
  src/itkCCACPUEngineLabeling.cxx
  src/itkCCACPUEngineFeatures.cxx
  src/itkCCACPUEngineIntensity.cxx
  src/itkCCACPUEngineLines.cxx
  src/itkCCASlabEngine.cxx
  src/itkCCASlabFaces.cxx
  src/itkCudaConnectedComponentAnalysisEnums.cxx
  )
if(CCA_WITH_CUDA)
  list(APPEND CCA_ENGINE_SOURCES
    cuda/itkCCACudaEngine.cu
    cuda/itkCCACudaEngineSmallImage.cu
    cuda/itkCCASmallImageAnalysis.cu
    cuda/itkCCACudaDevices.cu
    cuda/itkCCACudaStages.cu
    cuda/itkCCAMultiLabelStages.cu
    cuda/itkCCAIntensityStages.cu
    cuda/itkCCABasicColumns.cu
    cuda/itkCCARunGrouping.cu
    cuda/itkCCAPinnedStaging.cu
    cuda/itkCCAFeatureVariants.cu
    cuda/itkCCAFeatureVariantConflictDetection.cu
    )
else()
  list(APPEND CCA_ENGINE_SOURCES src/itkCCANoCudaEngine.cxx)
endif()
list(TRANSFORM CCA_ENGINE_SOURCES PREPEND "${CCA_ROOT}/")

find_package(Threads REQUIRED)
# What every target built from engine sources shares: the internal headers, src/ (both engines', e.g.
# itkCCARunMath.h) and cuda/ (kernels), position-independent code, and with CUDA the statically linked
# runtime (one library, and one Python wheel, runs with and without a GPU; without a driver or device the
# automatic backend says so and uses its CPU engine) and nvcc's options.
function(cca_engine_target target)
  target_include_directories(${target} PRIVATE ${CCA_ROOT}/src ${CCA_ROOT}/cuda)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${target} PRIVATE Threads::Threads)
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
