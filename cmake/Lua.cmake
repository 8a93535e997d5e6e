# Lua for scripting (EVAL, FUNCTION): Debian's LuaJIT 2.1 (libluajit-5.1-dev, Lua 5.1 semantics)
# and its lua-cjson (lua-cjson-dev), both linked statically so the server needs no Lua at run
# time. docs/scripting.md says why LuaJIT and why its JIT stays off. Defines the target
# gigakv::lua.
find_path(LUAJIT_INCLUDE_DIR luajit.h PATH_SUFFIXES luajit-2.1 REQUIRED)
find_library(LUAJIT_LIBRARY NAMES libluajit-5.1.a luajit-5.1 REQUIRED)
find_library(LUA_CJSON_LIBRARY NAMES liblua5.1-cjson.a lua5.1-cjson REQUIRED)
add_library(gigakv_lua INTERFACE)
target_include_directories(gigakv_lua SYSTEM INTERFACE ${LUAJIT_INCLUDE_DIR})
target_link_libraries(gigakv_lua INTERFACE ${LUA_CJSON_LIBRARY} ${LUAJIT_LIBRARY} ${CMAKE_DL_LIBS} m)
add_library(gigakv::lua ALIAS gigakv_lua)
