# Standalone build against an ITK that ships no module macros (Debian's ITK 5.2.1 has ITKConfig and
# UseITK, but not ITKModuleExternal.cmake / ITKModuleMacros.cmake).
#
# It defines the few ITK module macros that src/, test/ and examples/ use -- itk_module_add_library,
# itk_module_test, CreateTestDriver, itk_add_test, itk_module_examples -- doing what ITK's own do for this
# module, so that those CMakeLists.txt are written once, in ITK's form, for both builds.
message(STATUS "CudaConnectedComponentAnalysis: ITK ${ITK_VERSION} without ITKModuleExternal -- standalone build")

set(itk-module CudaConnectedComponentAnalysis)

# What the module (DEPENDS, COMPILE_DEPENDS) and its tests (TEST_DEPENDS) use, as in itk-module.cmake.
set(CCA_ITK_COMPONENTS
    ITKCommon ITKIOImageBase ITKIOMeta ITKIOPNG ITKIONRRD ITKConnectedComponents ITKImageIntensity
    ITKThresholding ITKLabelMap ITKTestKernel ITKZLIB)
find_package(ITK 5.2 REQUIRED COMPONENTS ${CCA_ITK_COMPONENTS})
include(${ITK_USE_FILE})

set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()
include(CTest)
set(ITK_TEST_OUTPUT_DIR "${CMAKE_BINARY_DIR}/Testing/Temporary")

# itk_module_add_library(name sources...): the module's library with ITK's export header.
macro(itk_module_add_library _name)
  add_library(${_name} ${ARGN})
  include(GenerateExportHeader)
  generate_export_header(${_name}
    EXPORT_MACRO_NAME ${_name}_EXPORT
    EXPORT_FILE_NAME ${PROJECT_BINARY_DIR}/include/${_name}Export.h)
  if(NOT BUILD_SHARED_LIBS)
    string(TOUPPER ${_name} _upper_name)
    target_compile_definitions(${_name} PUBLIC ${_upper_name}_STATIC_DEFINE)
  endif()
  target_include_directories(${_name} PUBLIC ${CudaConnectedComponentAnalysis_INCLUDE_DIRS}
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
  target_link_libraries(${_name} LINK_PUBLIC ${ITK_LIBRARIES})
endmacro()

# itk_module_test(): the libraries a test driver links, and the folder tests write to.
macro(itk_module_test)
  set(${itk-module}-Test_LIBRARIES ${itk-module} ${ITK_LIBRARIES})
  set(ITK_TEST_OUTPUT_DIR "${ITK_TEST_OUTPUT_DIR}/${itk-module}")
  file(MAKE_DIRECTORY "${ITK_TEST_OUTPUT_DIR}")
endmacro()

# CreateTestDriver(KIT KIT_LIBS KitTests): ITK's test driver (argument processing, --compare, IO factories).
macro(CreateTestDriver KIT KIT_LIBS KitTests)
  set(CMAKE_TESTDRIVER_BEFORE_TESTMAIN "#include \"itkTestDriverBeforeTest.inc\"")
  set(CMAKE_TESTDRIVER_AFTER_TESTMAIN "#include \"itkTestDriverAfterTest.inc\"")
  create_test_sourcelist(Tests ${KIT}TestDriver.cxx ${KitTests}
    EXTRA_INCLUDE itkTestDriverIncludeRequiredIOFactories.h
    FUNCTION ProcessArgumentsAndRegisterRequiredFactories)
  add_executable(${KIT}TestDriver ${KIT}TestDriver.cxx ${Tests} ${ARGN})
  target_link_libraries(${KIT}TestDriver LINK_PUBLIC ${KIT_LIBS} ITKTestKernel)
endmacro()

# itk_add_test(NAME name COMMAND ...): add_test labelled with the module's name.
function(itk_add_test)
  add_test(${ARGN})
  set_property(TEST ${ARGV1} PROPERTY LABELS ${itk-module})
endfunction()

# itk_module_examples(): the examples, always built here (the README's main job runs one).
macro(itk_module_examples)
  add_subdirectory(examples)
endmacro()

add_subdirectory(src)
if(BUILD_TESTING)
  add_subdirectory(test)
endif()
