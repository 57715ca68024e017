// native/io/curl_library.h — libcurl, loaded the first time the Hub is used.
//
// Linking libcurl makes every start of the CLI map and relocate its TLS, Kerberos and LDAP chain
// (~35 shared libraries, most of a local estimate's wall time) and run their constructors, for
// commands that never touch the network. The Hub client reaches libcurl through this table
// instead, filled by dlopen() on its first request.
#pragma once

#include <string>

#include <curl/curl.h>

namespace memfit::hub {

struct CurlLibrary {
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_perform) easy_perform;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
};

// The loaded and globally initialised library, or nullptr with `why` set (it is not installed,
// or lacks a function memfit calls). Loads once; safe from any thread.
const CurlLibrary* curl_library(std::string* why);

}  // namespace memfit::hub
