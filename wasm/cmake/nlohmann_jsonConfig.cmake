# nlohmann_json for the WASM build: Debian's headers through wasm/toolchain.cmake's symlink folder.
if(NOT TARGET nlohmann_json::nlohmann_json)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES ${MEMFIT_WASM_INCLUDE})
endif()
set(nlohmann_json_FOUND TRUE)
