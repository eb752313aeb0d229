get_filename_component(MY_CURRENT_DIR "${CMAKE_CURRENT_LIST_FILE}" PATH)
file(READ "${MY_CURRENT_DIR}/README.md" DOCUMENTATION)

itk_module(CudaConnectedComponentAnalysis
  ENABLE_SHARED
  DEPENDS
    ITKCommon
  COMPILE_DEPENDS
    ITKConnectedComponents
    ITKImageIntensity
    ITKLabelMap
  TEST_DEPENDS
    ITKTestKernel
    ITKIOMeta
    ITKIOPNG
    ITKIONRRD
    ITKThresholding
  DESCRIPTION
    "GPU (CUDA) connected component analysis: labels identical to ConnectedComponentImageFilter, with a CPU engine fallback."
  EXCLUDE_FROM_DEFAULT
)
