// A non-owning reference to a callable (like LLVM's function_ref): what a builder needs to
// call a caller's lambda while it builds, without std::function's copy, heap allocation and
// per-lambda clone/destroy code (~3 KB of WebAssembly over the families' callbacks).
//
// It must not outlive the callable: pass lambdas straight into the call, or keep a named one
// alive as long as the reference (deepseek.cpp). Assigning a temporary lambda to a stored
// FunctionRef would leave it dangling.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace memfit::arch {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  FunctionRef() = default;

  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT(google-explicit-constructor): used like std::function
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }
  explicit operator bool() const { return call_ != nullptr; }

 private:
  void* object_ = nullptr;
  R (*call_)(void*, Args...) = nullptr;
};

}  // namespace memfit::arch
