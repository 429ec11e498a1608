#include "app/gui/model/key_queue.h"

#include <algorithm>

namespace sl::gui {

std::vector<KeyEvent> KeyQueue::take_frame() {
  std::vector<KeyEvent> frame;
  while (!queue_.empty()) {
    const KeyEvent& next = queue_.front();
    const bool seen = std::any_of(frame.begin(), frame.end(), [&](const KeyEvent& e) { return e.key == next.key; });
    if (seen) break;  // keep the order across keys too: "s d s" stays s, d, s
    frame.push_back(next);
    queue_.pop_front();
  }
  return frame;
}

}  // namespace sl::gui
