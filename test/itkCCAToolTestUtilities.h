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
// What the tests of the command-line tool `cca` share: running it as a child process, its stdout and stderr
// redirected to files of the case's output folder, and checking its exit code and message.
#ifndef itkCCAToolTestUtilities_h
#define itkCCAToolTestUtilities_h

#include "itkCCATestUtilities.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#ifndef _WIN32
#  include <sys/wait.h>
#endif

namespace itk
{
namespace ccatest
{

inline std::string g_Tool;   ///< the tool's executable
inline std::string g_Folder; ///< the case's output folder

struct Outcome
{
  int         code{ -1 };
  std::string out;
  std::string err;
};

inline std::string
Quote(const std::string & s)
{
#ifdef _WIN32
  return "\"" + s + "\"";
#else
  std::string q = "'";
  for (char c : s)
  {
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return q + "'";
#endif
}

inline std::string
Slurp(const std::string & fileName)
{
  std::ifstream     in(fileName, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/** Runs the tool; stdout and stderr go to files, read back and echoed for the test log. `environment`
 * ("NAME=value ") is put before the command (POSIX shells). */
inline Outcome
Run(const std::vector<std::string> & args, const std::string & tag, const std::string & environment = "")
{
  std::string command = environment + Quote(g_Tool);
  for (const auto & a : args)
  {
    command += " " + Quote(a);
  }
  const std::string out = g_Folder + "/" + tag + ".stdout";
  const std::string err = g_Folder + "/" + tag + ".stderr";
  std::cout << "$ " << command << std::endl;
  const int status = std::system((command + " > " + Quote(out) + " 2> " + Quote(err)).c_str());
  Outcome   o;
#ifdef _WIN32
  o.code = status;
#else
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
#endif
  o.out = Slurp(out);
  o.err = Slurp(err);
  std::cout << o.out << o.err << "exit code " << o.code << std::endl;
  return o;
}

inline bool
Expect(const Outcome & o, int code, const std::string & inStderr)
{
  if (o.code != code)
  {
    std::cerr << "expected exit code " << code << ", got " << o.code << std::endl;
    return false;
  }
  if (o.err.find(inStderr) == std::string::npos)
  {
    std::cerr << "stderr lacks \"" << inStderr << "\"" << std::endl;
    return false;
  }
  return true;
}

} // namespace ccatest
} // namespace itk

#endif
