#pragma once
// Dear ImGui 1.86 reads the keyboard as "is it down at the start of the
// frame", so a tap shorter than a frame (press and release between two
// frames) is lost: `xdotool key --delay 30 s s s` zoomed twice. The GLFW
// key callback queues the events here instead, and each frame passes on
// at most one event per key, so every press is seen for a frame.
// No GLFW or ImGui here.

#include <deque>
#include <vector>

namespace sl::gui {

struct KeyEvent {
  int key = 0;
  int scancode = 0;
  int action = 0;  // GLFW_PRESS, GLFW_RELEASE or GLFW_REPEAT
  int mods = 0;
};

class KeyQueue {
 public:
  void push(const KeyEvent& event) { queue_.push_back(event); }
  // The events for this frame, in order: stops before a second event of a
  // key already in them (the rest waits for the next frame).
  std::vector<KeyEvent> take_frame();
  bool empty() const { return queue_.empty(); }

 private:
  std::deque<KeyEvent> queue_;
};

}  // namespace sl::gui
