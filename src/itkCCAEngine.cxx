/*=========================================================================
 *  Engine-independent helpers of the connected component analysis engines.
 *=========================================================================*/
#include "itkCCAEngine.h"

namespace itk
{
namespace cca
{

Engine::~Engine() = default;

std::size_t
ScalarKindSize(ScalarKind kind)
{
  switch (kind)
  {
    case ScalarKind::UInt8:
    case ScalarKind::Int8:
      return 1;
    case ScalarKind::UInt16:
    case ScalarKind::Int16:
      return 2;
    case ScalarKind::UInt32:
    case ScalarKind::Int32:
    case ScalarKind::Float32:
      return 4;
    case ScalarKind::UInt64:
    case ScalarKind::Int64:
    case ScalarKind::Float64:
      return 8;
  }
  return 0;
}

const char *
ScalarKindName(ScalarKind kind)
{
  switch (kind)
  {
    case ScalarKind::UInt8:
      return "uint8";
    case ScalarKind::Int8:
      return "int8";
    case ScalarKind::UInt16:
      return "uint16";
    case ScalarKind::Int16:
      return "int16";
    case ScalarKind::UInt32:
      return "uint32";
    case ScalarKind::Int32:
      return "int32";
    case ScalarKind::UInt64:
      return "uint64";
    case ScalarKind::Int64:
      return "int64";
    case ScalarKind::Float32:
      return "float32";
    case ScalarKind::Float64:
      return "float64";
  }
  return "unknown";
}

const char *
FeatureAlgorithmName(FeatureAlgorithm algorithm)
{
  switch (algorithm)
  {
    case FeatureAlgorithm::ConflictDetection:
      return "FLSL+CD";
    case FeatureAlgorithm::OnTheFlyMerge:
      return "FLSL+OTF";
    case FeatureAlgorithm::RunAtomics:
      return "FLSL";
    case FeatureAlgorithm::PixelAtomics:
      return "naive";
  }
  return "unknown";
}

} // namespace cca
} // namespace itk
