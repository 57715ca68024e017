// memfit/model/arch.h — the architecture registry.
//
// One Family per file under core/model/arch/, listed once in core/model/arch/registry.cpp. A family
// knows the model_types (or timm architecture names) it handles, the classes it can build — the
// first is the base class AutoModel builds — and how to build the tensor tree of a class from a
// config. Nothing outside core/model/arch/ switches on model_type.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/model/config.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

// A class a family can build, and the Auto class transformers maps to it.
struct ModelClass {
  std::string_view name;        // "LlamaForCausalLM"
  std::string_view auto_class;  // "AutoModelForCausalLM"; "AutoModel" for the base class
};

struct BuildRequest {
  const Config& config;
  std::string_view class_name;  // one of Family::classes
  std::string_view model_name;  // the Hub id or path; timm families read the variant from it
};

// Each family is one static Family, brace-initialized in its file with constants only, so it
// is constant data: `keys` and `classes` are initializer_lists (their arrays live as long as the
// static Family), not vectors that WebAssembly code would build at start-up. timm families name
// their architectures in their variant tables instead: `variant_keys` lists them.
struct Family {
  std::string_view library;                   // "transformers" or "timm"
  std::initializer_list<std::string_view> keys;  // model_type values
  std::initializer_list<ModelClass> classes;  // the first is the AutoModel class
  TensorTree (*build)(const BuildRequest& req);
  std::vector<std::string_view> (*variant_keys)() = nullptr;  // timm architecture names
};

// Every key of a family: `keys`, then `variant_keys()`.
std::vector<std::string_view> family_keys(const Family& f);

// Every registered family, in a stable order.
const std::vector<const Family*>& families();
// The family for a model_type (library "transformers") or timm architecture; nullptr if none.
const Family* find_family(std::string_view library, std::string_view key);
// Sorted, comma-separated keys of a library (for "unsupported model_type" messages).
std::string supported_keys(std::string_view library);

// Helpers for family files.
const ModelClass* find_class(const Family& f, std::string_view class_name);
// True when the request asks for this class (or one of several).
inline bool is_class(const BuildRequest& r, std::string_view name) { return r.class_name == name; }

}  // namespace memfit
