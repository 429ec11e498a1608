#include "core/dist/rendezvous.h"

#include <algorithm>
#include <array>
#include <thread>
#include <utility>

#include "core/dist/socket_io.h"

namespace sl::dist {
namespace {

// Wire format: a 20-byte header (magic, type, op, sequence number, payload
// length, all big-endian) and the payload.
constexpr uint32_t kMagic = 0x534C5256;  // "SLRV"
constexpr size_t kHeaderBytes = 20;
constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 30;
// A connection that sends no hello this long after connecting is a stray
// (a port scanner, another program) and is dropped rather than waited for.
constexpr auto kHelloTimeout = std::chrono::seconds(5);
// Error frames to the other ranks after a failure: best effort, briefly.
constexpr auto kErrorNoticeTimeout = std::chrono::seconds(1);
constexpr auto kConnectRetryDelay = std::chrono::milliseconds(50);

enum FrameType : uint8_t { kData = 1, kError = 2, kHello = 3 };
enum Op : uint8_t { kJoin = 0, kAllGather = 1, kBroadcast = 2, kBarrier = 3 };

const char* op_name(uint8_t op) {
  switch (op) {
    case kJoin:
      return "connect";
    case kAllGather:
      return "all_gather";
    case kBroadcast:
      return "broadcast";
    case kBarrier:
      return "barrier";
  }
  return "unknown operation";
}

struct Frame {
  uint8_t type = kData;
  uint8_t op = kJoin;
  uint32_t seq = 0;
  std::string payload;
};

void put_u64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xff));
}

uint64_t get_u64(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

// Reads and checks a frame; the error is the bare reason, the caller adds who.
Result<Frame> read_frame(int fd, Clock::time_point deadline, std::chrono::milliseconds timeout) {
  std::array<unsigned char, kHeaderBytes> header{};
  IoResult io = recv_all(fd, header.data(), header.size(), deadline);
  auto io_error = [&](const IoResult& r) {
    if (r.status == IoStatus::kTimeout) return runtime_error("no answer within " + format_duration(timeout));
    if (r.status == IoStatus::kClosed)
      return runtime_error("connection closed (the process exited or failed)");
    return runtime_error(r.describe());
  };
  if (!io.ok()) return io_error(io);
  if (get_u64(header.data(), 4) != kMagic)
    return runtime_error("not a streamlens rendezvous peer (bad magic)");
  Frame frame;
  frame.type = header[4];
  frame.op = header[5];
  frame.seq = static_cast<uint32_t>(get_u64(header.data() + 8, 4));
  uint64_t size = get_u64(header.data() + 12, 8);
  if (size > kMaxFrameBytes) {
    return runtime_error("message of " + std::to_string(size) + " bytes exceeds the 1 GiB limit");
  }
  frame.payload.resize(size);
  io = recv_all(fd, frame.payload.data(), size, deadline);
  if (!io.ok()) return io_error(io);
  return frame;
}

Status write_frame(int fd, const Frame& frame, Clock::time_point deadline,
                   std::chrono::milliseconds timeout) {
  if (frame.payload.size() > kMaxFrameBytes) {
    return invalid_input("message of " + std::to_string(frame.payload.size()) +
                         " bytes exceeds the 1 GiB limit");
  }
  std::string bytes;
  bytes.reserve(kHeaderBytes + frame.payload.size());
  for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>((kMagic >> shift) & 0xff));
  bytes.push_back(static_cast<char>(frame.type));
  bytes.push_back(static_cast<char>(frame.op));
  bytes.append(2, '\0');
  for (int shift = 24; shift >= 0; shift -= 8)
    bytes.push_back(static_cast<char>((frame.seq >> shift) & 0xff));
  put_u64(&bytes, frame.payload.size());
  bytes += frame.payload;
  IoResult io = send_all(fd, bytes.data(), bytes.size(), deadline);
  if (io.ok()) return ok_status();
  if (io.status == IoStatus::kTimeout)
    return runtime_error("could not send within " + format_duration(timeout));
  if (io.status == IoStatus::kClosed)
    return runtime_error("connection closed (the process exited or failed)");
  return runtime_error(io.describe());
}

std::string encode_all(const std::vector<std::string>& parts) {
  std::string out;
  put_u64(&out, parts.size());
  for (const std::string& p : parts) {
    put_u64(&out, p.size());
    out += p;
  }
  return out;
}

Result<std::vector<std::string>> decode_all(const std::string& bytes, size_t expected) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t left = bytes.size();
  auto take_u64 = [&](uint64_t* v) {
    if (left < 8) return false;
    *v = get_u64(p, 8);
    p += 8;
    left -= 8;
    return true;
  };
  uint64_t count = 0;
  if (!take_u64(&count) || count != expected) return runtime_error("malformed all_gather reply from rank 0");
  std::vector<std::string> parts;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t size = 0;
    if (!take_u64(&size) || size > left) return runtime_error("malformed all_gather reply from rank 0");
    parts.emplace_back(reinterpret_cast<const char*>(p), size);
    p += size;
    left -= size;
  }
  return parts;
}

std::string hello_payload(const DistEnv& env) {
  std::string out;
  put_u64(&out, static_cast<uint64_t>(env.rank));
  put_u64(&out, static_cast<uint64_t>(env.world_size));
  return out;
}

}  // namespace

// Rank 0: sockets[r] talks to rank r (sockets[0] unused). Other ranks:
// sockets[0] talks to rank 0.
struct Rendezvous::Peers {
  std::vector<Socket> sockets;
};

namespace {

Result<std::vector<Socket>> join_as_root(const DistEnv& env, std::chrono::milliseconds timeout);
Result<std::vector<Socket>> join_as_peer(const DistEnv& env, std::chrono::milliseconds timeout);

}  // namespace

Result<std::unique_ptr<Rendezvous>> Rendezvous::connect(const DistEnv& env,
                                                        std::chrono::milliseconds timeout) {
  if (env.world_size < 1 || env.rank < 0 || env.rank >= env.world_size) {
    return invalid_input("rank " + std::to_string(env.rank) + " is outside a world of " +
                         std::to_string(env.world_size));
  }
  if (env.master_port < 1 || env.master_port > 65535) {
    return invalid_input("MASTER_PORT " + std::to_string(env.master_port) + " is outside [1, 65535]");
  }
  if (timeout.count() <= 0) return invalid_input("rendezvous timeout must be positive");
  auto peers = std::make_unique<Peers>();
  if (env.world_size > 1 && env.rank == 0) {
    SL_ASSIGN_OR_RETURN(peers->sockets, join_as_root(env, timeout));
  } else if (env.world_size > 1) {
    SL_ASSIGN_OR_RETURN(peers->sockets, join_as_peer(env, timeout));
  }
  return std::unique_ptr<Rendezvous>(new Rendezvous(env, timeout, std::move(peers)));
}

namespace {

// Tells every joined rank why the join failed, then reports it here.
Status abort_join(std::vector<Socket>& sockets, Status status) {
  Clock::time_point deadline = Clock::now() + kErrorNoticeTimeout;
  for (Socket& s : sockets) {
    if (s.valid())
      (void)write_frame(s.fd(), {kError, kJoin, 0, status.message()}, deadline, kErrorNoticeTimeout);
    s.close();
  }
  return status;
}

Result<std::vector<Socket>> join_as_root(const DistEnv& env, std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  std::string port = std::to_string(env.master_port);
  std::string error;
  Socket listener = listen_tcp(env.master_port, env.world_size + 16, &error);
  if (!listener.valid())
    return runtime_error("rank 0 could not listen on MASTER_PORT " + port + ": " + error);

  std::vector<Socket> sockets(static_cast<size_t>(env.world_size));
  int joined = 1;
  while (joined < env.world_size) {
    Socket conn;
    IoResult accepted = accept_until(listener.fd(), deadline, &conn);
    if (accepted.status == IoStatus::kTimeout) {
      std::string missing;
      for (int r = 1; r < env.world_size; ++r) {
        if (!sockets[static_cast<size_t>(r)].valid())
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      return abort_join(
          sockets, runtime_error("rank 0: only " + std::to_string(joined) + " of " +
                                 std::to_string(env.world_size) + " ranks joined on MASTER_PORT " + port +
                                 " within " + format_duration(timeout) + " (missing ranks " + missing + ")"));
    }
    if (!accepted.ok()) {
      return abort_join(sockets, runtime_error("rank 0: accepting on MASTER_PORT " + port +
                                               " failed: " + accepted.describe()));
    }
    Result<Frame> hello = read_frame(conn.fd(), std::min(deadline, Clock::now() + kHelloTimeout), timeout);
    if (!hello || hello->type != kHello || hello->payload.size() != 16) continue;  // a stray: drop it
    const auto* p = reinterpret_cast<const unsigned char*>(hello->payload.data());
    uint64_t rank = get_u64(p, 8), world = get_u64(p + 8, 8);
    Status bad;
    if (world != static_cast<uint64_t>(env.world_size)) {
      bad = runtime_error("rank 0: a process announced RANK=" + std::to_string(rank) +
                          " of WORLD_SIZE=" + std::to_string(world) +
                          ", but rank 0 has WORLD_SIZE=" + std::to_string(env.world_size));
    } else if (rank == 0) {
      bad = runtime_error("rank 0: another process also has RANK=0; check the launcher's RANK values");
    } else if (sockets[rank].valid()) {
      bad = runtime_error("rank 0: two processes announced RANK=" + std::to_string(rank) +
                          "; check the launcher's RANK values");
    }
    if (!bad.is_ok()) {
      (void)write_frame(conn.fd(), {kError, kJoin, 0, bad.message()}, Clock::now() + kErrorNoticeTimeout,
                        kErrorNoticeTimeout);
      return abort_join(sockets, bad);
    }
    sockets[rank] = std::move(conn);
    ++joined;
  }
  // Everyone is here: release them together, so connect() is a full rendezvous.
  for (int r = 1; r < env.world_size; ++r) {
    Status sent = write_frame(sockets[static_cast<size_t>(r)].fd(), {kData, kJoin, 0, {}}, deadline, timeout);
    if (!sent.is_ok()) {
      return abort_join(
          sockets, runtime_error("rank 0: connect with rank " + std::to_string(r) + ": " + sent.message()));
    }
  }
  return sockets;
}

Result<std::vector<Socket>> join_as_peer(const DistEnv& env, std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  std::string me = "rank " + std::to_string(env.rank);
  std::string master = host_port(env.master_addr, env.master_port);
  Socket socket;
  for (;;) {
    IoResult connected = connect_once(env.master_addr, env.master_port, deadline, &socket);
    if (connected.ok()) break;
    if (Clock::now() + kConnectRetryDelay >= deadline) {
      return runtime_error(me + " could not reach MASTER_ADDR " + master + " within " +
                           format_duration(timeout) + ": " + connected.describe());
    }
    std::this_thread::sleep_for(kConnectRetryDelay);  // rank 0 may not be listening yet
  }
  std::string with_root = me + ": connect with rank 0 at " + master + ": ";
  Status sent = write_frame(socket.fd(), {kHello, kJoin, 0, hello_payload(env)}, deadline, timeout);
  if (!sent.is_ok()) return runtime_error(with_root + sent.message());
  Result<Frame> ack = read_frame(socket.fd(), deadline, timeout);
  if (!ack) {
    return runtime_error(with_root + "not all " + std::to_string(env.world_size) +
                         " ranks joined: " + ack.status().message());
  }
  if (ack->type == kError) return runtime_error(with_root + ack->payload);
  if (ack->type != kData || ack->op != kJoin) return runtime_error(with_root + "unexpected reply");
  std::vector<Socket> sockets;
  sockets.push_back(std::move(socket));
  return sockets;
}

}  // namespace

Rendezvous::Rendezvous(DistEnv env, std::chrono::milliseconds timeout, std::unique_ptr<Peers> peers)
    : env_(std::move(env)), timeout_(timeout), peers_(std::move(peers)) {}

Rendezvous::~Rendezvous() = default;

std::vector<std::pair<int, int>> Rendezvous::connections() const {
  std::vector<std::pair<int, int>> out;
  for (size_t i = 0; i < peers_->sockets.size(); ++i) {
    const Socket& s = peers_->sockets[i];
    if (s.valid()) out.emplace_back(s.fd(), env_.rank == 0 ? static_cast<int>(i) : 0);
  }
  return out;
}

Status Rendezvous::fail(Status status) {
  if (broken_.is_ok()) broken_ = status;
  Clock::time_point deadline =
      Clock::now() + std::min<std::chrono::milliseconds>(timeout_, kErrorNoticeTimeout);
  for (Socket& s : peers_->sockets) {
    // Rank 0 tells the others why; everyone closes so peers stop waiting.
    if (env_.rank == 0 && s.valid()) {
      (void)write_frame(s.fd(), {kError, kJoin, seq_, status.message()}, deadline, timeout_);
    }
    s.close();
  }
  return status;
}

Status Rendezvous::check_usable(uint8_t op) {
  if (broken_.is_ok()) return ok_status();
  return runtime_error("rank " + std::to_string(env_.rank) + ": " + op_name(op) +
                       " after an earlier rendezvous failure: " + broken_.message());
}

Result<std::vector<std::string>> Rendezvous::gather_to_root(uint8_t op, const std::string& mine) {
  Clock::time_point deadline = Clock::now() + timeout_;
  std::string what = std::string(op_name(op)) + " #" + std::to_string(seq_);
  if (env_.rank != 0) {
    Status sent = write_frame(peers_->sockets[0].fd(), {kData, op, seq_, mine}, deadline, timeout_);
    if (!sent.is_ok()) {
      return fail(runtime_error("rank " + std::to_string(env_.rank) + ": " + what + " with rank 0 at " +
                                host_port(env_.master_addr, env_.master_port) + ": " + sent.message()));
    }
    return std::vector<std::string>();
  }
  std::vector<std::string> all(static_cast<size_t>(env_.world_size));
  all[0] = mine;
  for (int r = 1; r < env_.world_size; ++r) {
    std::string with = "rank 0: " + what + " with rank " + std::to_string(r) + ": ";
    Result<Frame> frame = read_frame(peers_->sockets[static_cast<size_t>(r)].fd(), deadline, timeout_);
    if (!frame) return fail(runtime_error(with + frame.status().message()));
    if (frame->type != kData || frame->op != op || frame->seq != seq_) {
      return fail(runtime_error(with + "rank " + std::to_string(r) + " is at " + op_name(frame->op) + " #" +
                                std::to_string(frame->seq) +
                                "; every rank must call the collectives in the same order"));
    }
    all[static_cast<size_t>(r)] = std::move(frame->payload);
  }
  return all;
}

Result<std::string> Rendezvous::send_from_root(uint8_t op, const std::string& payload) {
  Clock::time_point deadline = Clock::now() + timeout_;
  std::string what = std::string(op_name(op)) + " #" + std::to_string(seq_);
  if (env_.rank == 0) {
    for (int r = 1; r < env_.world_size; ++r) {
      Status sent = write_frame(peers_->sockets[static_cast<size_t>(r)].fd(), {kData, op, seq_, payload},
                                deadline, timeout_);
      if (!sent.is_ok()) {
        return fail(
            runtime_error("rank 0: " + what + " with rank " + std::to_string(r) + ": " + sent.message()));
      }
    }
    return payload;
  }
  std::string with = "rank " + std::to_string(env_.rank) + ": " + what + " with rank 0 at " +
                     host_port(env_.master_addr, env_.master_port) + ": ";
  Result<Frame> frame = read_frame(peers_->sockets[0].fd(), deadline, timeout_);
  if (!frame) return fail(runtime_error(with + frame.status().message()));
  if (frame->type == kError) return fail(runtime_error(with + "failed on rank 0: " + frame->payload));
  if (frame->type != kData || frame->op != op || frame->seq != seq_) {
    return fail(runtime_error(with + "rank 0 is at " + std::string(op_name(frame->op)) + " #" +
                              std::to_string(frame->seq) +
                              "; every rank must call the collectives in the same order"));
  }
  return std::move(frame->payload);
}

Result<std::vector<std::string>> Rendezvous::all_gather(const std::string& mine) {
  SL_RETURN_IF_ERROR(check_usable(kAllGather));
  ++seq_;
  SL_ASSIGN_OR_RETURN(std::vector<std::string> gathered, gather_to_root(kAllGather, mine));
  if (env_.world_size == 1) return gathered;
  std::string encoded = env_.rank == 0 ? encode_all(gathered) : std::string();
  SL_ASSIGN_OR_RETURN(std::string reply, send_from_root(kAllGather, encoded));
  if (env_.rank == 0) return gathered;
  Result<std::vector<std::string>> decoded = decode_all(reply, static_cast<size_t>(env_.world_size));
  if (!decoded)
    return fail(runtime_error("rank " + std::to_string(env_.rank) + ": " + decoded.status().message()));
  return decoded;
}

Result<std::string> Rendezvous::broadcast(const std::string& from_root) {
  SL_RETURN_IF_ERROR(check_usable(kBroadcast));
  ++seq_;
  if (env_.world_size == 1) return from_root;
  return send_from_root(kBroadcast, env_.rank == 0 ? from_root : std::string());
}

Status Rendezvous::barrier() {
  SL_RETURN_IF_ERROR(check_usable(kBarrier));
  ++seq_;
  if (env_.world_size == 1) return ok_status();
  SL_ASSIGN_OR_RETURN(std::vector<std::string> ignored, gather_to_root(kBarrier, std::string()));
  (void)ignored;
  Result<std::string> released = send_from_root(kBarrier, std::string());
  return released.is_ok() ? ok_status() : released.status();
}

}  // namespace sl::dist
