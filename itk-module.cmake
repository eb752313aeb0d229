get_filename_component(MY_CURRENT_DIR "${CMAKE_CURRENT_LIST_FILE}" PATH)
file(READ "${MY_CURRENT_DIR}/README.md" DOCUMENTATION)

# The public headers use LabelMap and ShapeLabelObject (ITKLabelMap, which also holds GeometryUtilities
# since ITK 5.4): a link dependency, not a compile-only one. The rest is what the tests use (NIfTI, TIFF and
# GDCM: the IO of the command-line tool `cca`, whose tests write .nii.gz files and a DICOM series; zlib, to check
# the tool's own gzip files).
itk_module(CudaConnectedComponentAnalysis
  ENABLE_SHARED
  DEPENDS
    ITKCommon
    ITKLabelMap
  TEST_DEPENDS
    ITKTestKernel
    ITKConnectedComponents
    ITKImageIntensity
    ITKThresholding
    ITKIOMeta
    ITKIOPNG
    ITKIONRRD
    ITKIONIFTI
    ITKIOTIFF
    ITKIOGDCM
    ITKZLIB
  DESCRIPTION
    "GPU (CUDA) connected component analysis: labels identical to ConnectedComponentImageFilter and a LabelMap of ShapeLabelObjects, with a CPU engine fallback."
  EXCLUDE_FROM_DEFAULT
)
