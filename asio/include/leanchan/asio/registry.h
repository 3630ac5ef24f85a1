// SPDX-License-Identifier: MIT
/// @file
/// leanchan/asio/registry.h: an execution-context service that knows every
/// leanchan::asio object made on the context, so that shutting the context
/// down destroys their pending operations (handlers destroyed, not called),
/// as Asio does for its own I/O objects. Without it, a coroutine that owns
/// an AsyncReceiver and waits in it would own itself through the pending
/// operation and never be destroyed. Internal: include leanchan/asio.h.
#ifndef LEANCHAN_ASIO_REGISTRY_H_
#define LEANCHAN_ASIO_REGISTRY_H_

#include <mutex>

#include "leanchan/asio/resumer.h"

namespace leanchan::asio::internal {

class Registry;

// The part of an I/O object the registry sees.
class Registered {
 public:
  Registered(const Registered&) = delete;
  Registered& operator=(const Registered&) = delete;

 protected:
  Registered() = default;
  ~Registered() = default;

 private:
  friend class Registry;
  // At context shutdown: detach the channel's notifier (its callback is not
  // running when this returns and will not run again) and hand over the
  // pending operation, if any, for destruction.
  virtual PendingBase* detach_for_shutdown() noexcept = 0;

  Registered* prev_ = nullptr;
  Registered* next_ = nullptr;
  bool linked_ = false;
};

class Registry final : public net::execution_context::service {
 public:
  using key_type = Registry;
  inline static net::execution_context::id id;

  explicit Registry(net::execution_context& context) : net::execution_context::service(context) {}

  template <class Executor>
  static Registry& of(const Executor& executor) {
    return net::use_service<Registry>(net::query(executor, net::execution::context));
  }

  void add(Registered* object) {
    std::lock_guard<std::mutex> lock(mutex_);
    object->prev_ = nullptr;
    object->next_ = head_;
    if (head_ != nullptr) head_->prev_ = object;
    head_ = object;
    object->linked_ = true;
  }
  // No-op if shutdown() already took it.
  void remove(Registered* object) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    unlink_locked(object);
  }

 private:
  void unlink_locked(Registered* object) noexcept {
    if (!object->linked_) return;
    if (object->prev_ != nullptr) object->prev_->next_ = object->next_;
    if (object->next_ != nullptr) object->next_->prev_ = object->prev_;
    if (head_ == object) head_ = object->next_;
    object->linked_ = false;
  }

  // One object at a time, outside the lock: destroying an operation may
  // destroy objects (a coroutine frame holding them), which then remove
  // themselves.
  void shutdown() override {
    for (;;) {
      Registered* object = nullptr;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        object = head_;
        if (object == nullptr) return;
        unlink_locked(object);
      }
      if (PendingBase* op = object->detach_for_shutdown()) op->destroy();
    }
  }

  std::mutex mutex_;
  Registered* head_ = nullptr;
};

}  // namespace leanchan::asio::internal

#endif  // LEANCHAN_ASIO_REGISTRY_H_
