# Writes OUT, the header of `rltrade --version`: RLT_VERSION, RLT_BUILD_TYPE, RLT_BUILT_TORCH
# and RLT_BUILT_MPI as passed in (-DVERSION, -DBUILD_TYPE, -DTORCH, -DMPI), and RLT_COMMIT:
# the source tree's commit (git rev-parse, with "-modified" when tracked files differ from
# it), or "unknown" outside a git checkout (a release tarball). Run at every build (cli/CMakeLists.txt, target rlt_version_info); the
# file is rewritten only when the text changes, so an unchanged commit rebuilds nothing.
# Usage: cmake -DSRC=<source dir> -DOUT=<header> -DVERSION=.. -DBUILD_TYPE=.. -DTORCH=0|1
#        -DMPI=0|1 -P version_info.cmake
set(commit "unknown")
find_program(GIT git)
if(GIT)
  execute_process(COMMAND ${GIT} -C ${SRC} rev-parse --short=12 HEAD
    OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND NOT head STREQUAL "")
    set(commit "${head}")
    execute_process(COMMAND ${GIT} -C ${SRC} status --porcelain --untracked-files=no
      OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT changes STREQUAL "")
      string(APPEND commit "-modified")
    endif()
  endif()
endif()
file(WRITE "${OUT}.tmp"
  "#define RLT_VERSION \"${VERSION}\"\n"
  "#define RLT_COMMIT \"${commit}\"\n"
  "#define RLT_BUILD_TYPE \"${BUILD_TYPE}\"\n"
  "#define RLT_BUILT_TORCH ${TORCH}\n"
  "#define RLT_BUILT_MPI ${MPI}\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
