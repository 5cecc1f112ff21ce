# pe_dll.cmake - reading a Windows DLL's export and import tables with MinGW's objdump -p, for the
# export checks of cudot.dll (check_exports.cmake) and cudot_classic.dll (check_classic_exports.cmake).

# cudot_pe_tables(OBJDUMP DLL EXPORTS_VAR IMPORTS_VAR INTERNAL_NAME_VAR): the names the DLL exports
# (sorted), the DLLs it imports from and the name it carries in its export directory. Fails if any
# export has no name (exported by ordinal only): every export must be accounted for by name.
function(cudot_pe_tables objdump dll exports_var imports_var name_var)
  execute_process(COMMAND ${objdump} -p ${dll} OUTPUT_VARIABLE dump RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${objdump} -p failed on ${dll}")
  endif()
  string(REPLACE "\n" ";" lines "${dump}")
  set(exports "")
  set(imports "")
  set(addresses 0)
  set(in_names FALSE)
  foreach(line IN LISTS lines)
    if(line MATCHES "^\tDLL Name: (.+)$")
      list(APPEND imports "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^\t\\[ *[0-9]+\\] \\+base\\[ *[0-9]+\\] [0-9a-fA-F]+ ")  # an Export Address Table entry
      math(EXPR addresses "${addresses} + 1")
    elseif(line MATCHES "^\\[Ordinal/Name Pointer\\] Table")
      set(in_names TRUE)
    elseif(in_names AND line MATCHES "^\t\\[ *[0-9]+\\] (.+)$")
      list(APPEND exports "${CMAKE_MATCH_1}")
    elseif(in_names)
      set(in_names FALSE)
    endif()
  endforeach()
  list(LENGTH exports named)
  if(NOT named EQUAL addresses)
    message(FATAL_ERROR "${dll}: ${addresses} exports, ${named} of them by name:\n${dump}")
  endif()
  string(REGEX MATCH "\nName[ \t]+[0-9a-fA-F]+ ([^\n]+)" _ "${dump}")
  list(SORT exports)
  set(${exports_var} "${exports}" PARENT_SCOPE)
  set(${imports_var} "${imports}" PARENT_SCOPE)
  set(${name_var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

# cudot_pe_system_imports_only(DLL IMPORTS): fails unless every imported DLL is part of Windows itself, so
# the DLL is one file to deploy: no MinGW runtime (libstdc++-6, libgcc_s_seh-1, libwinpthread-1) and no
# CUDA (the Windows build has none; a GPU build must load the driver at run time, not at load time).
function(cudot_pe_system_imports_only dll imports)
  foreach(import IN LISTS imports)
    string(TOLOWER "${import}" lower)
    if(NOT lower MATCHES "^(kernel32|msvcrt|ntdll|advapi32|user32|bcrypt|ws2_32|ucrtbase|api-ms-win-[a-z0-9-]+)\\.dll$")
      message(FATAL_ERROR "${dll} imports ${import}, which is not a Windows system DLL (imports: ${imports})")
    endif()
  endforeach()
endfunction()
