/*=========================================================================
 *
 *  Copyright NumFOCUS
 *
 *  Licensed under the Apache License, Version 2.0 (the "License");
 *  you may not use this file except in compliance with the License.
 *  You may obtain a copy of the License at
 *
 *         http://www.apache.org/licenses/LICENSE-2.0.txt
 *
 *  Unless required by applicable law or agreed to in writing, software
 *  distributed under the License is distributed on an "AS IS" BASIS,
 *  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 *  See the License for the specific language governing permissions and
 *  limitations under the License.
 *
 *=========================================================================*/
#ifndef itkCCAContacts_h
#define itkCCAContacts_h

// Which labels of a label image touch, and how much (ContactRequest, ContactTable in itkCCATypes.h): the host
// version, which the CPU engine runs (the CUDA engine's is cuda/itkCCAContactStages.cu).

#include "itkCCAEngine.h"

namespace itk
{
namespace cca
{

/** The contacts of `request`'s labels (host memory) on `numberOfThreads` threads. */
void
ComputeContactsOnHost(const ContactRequest & request, unsigned numberOfThreads, ContactTable & table);

} // namespace cca
} // namespace itk

#endif
