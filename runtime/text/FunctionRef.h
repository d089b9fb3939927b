//===- FunctionRef.h - a non-owning reference to a callable ----*- C++ -*-===//
//
// The tokenizer streams pieces of text from one stage to the next through
// callbacks (a document of gigabytes never exists as a list of pre-tokens);
// std::function would allocate for most of those lambdas on every call.
// FunctionRef only points at a callable that outlives the call it is passed
// to (like llvm::function_ref, which the runtime may not use).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TEXT_FUNCTIONREF_H
#define LLMC_RUNTIME_TEXT_FUNCTIONREF_H

#include <memory>
#include <type_traits>
#include <utility>

namespace llmc::rt::text {

template <typename Fn> class FunctionRef;

template <typename Ret, typename... Params> class FunctionRef<Ret(Params...)> {
public:
  template <typename Callable,
            typename = std::enable_if_t<!std::is_same_v<
                std::remove_cv_t<std::remove_reference_t<Callable>>,
                FunctionRef>>>
  FunctionRef(Callable &&callable) // NOLINT: implicit on purpose
      : callable_(const_cast<void *>(
            static_cast<const void *>(std::addressof(callable)))),
        call_([](void *callable, Params... params) -> Ret {
          return (*reinterpret_cast<std::remove_reference_t<Callable> *>(
              callable))(std::forward<Params>(params)...);
        }) {}

  Ret operator()(Params... params) const {
    return call_(callable_, std::forward<Params>(params)...);
  }

private:
  void *callable_;
  Ret (*call_)(void *, Params...);
};

} // namespace llmc::rt::text

#endif // LLMC_RUNTIME_TEXT_FUNCTIONREF_H
