/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file sdr.h
 * libsdr — host shim of sdr-dpu: SDR messaging (partial message completion
 * with receive bitmaps) over a DPU running the sdr-dpu daemon.
 *
 * The API mirrors the SDR SDK (context, QP, MR, one-shot and streaming
 * sends, receives with live chunk bitmaps) with the sdr_ prefix. See
 * docs/host-api.md for the memory model, handle lifetime and examples.
 *
 * Conventions:
 *  - Control functions return 0 or a negative errno, or a pointer / NULL
 *    with errno set. Each function lists every errno it can return.
 *  - Data-path calls never block: a full ring returns -EAGAIN.
 *  - A context and everything created from it is single-threaded: callers
 *    that share one between threads must serialise all calls on it.
 *  - When the daemon dies (its socket hangs up), the context re-attaches to
 *    its next incarnation within a window (sdr_ctx_attr.reattach_ms) and
 *    restores its MRs, QPs and outstanding operations: no call fails within
 *    the window (docs/host-api.md §6). Without re-attach, or once the window
 *    expired, calls return -EPIPE.
 *
 * Completion status values (struct sdr_wc.status, and the negative values
 * returned by sdr_send_poll() / sdr_recv_poll()):
 *  -  0          success
 *  - -EINVAL     malformed descriptor (rejected by the DPU)
 *  - -EBADF      unknown QP id
 *  - -ENOENT     unknown MR id
 *  - -ERANGE     offset + length outside the MR
 *  - -EMSGSIZE   zero length, length > max_msg, or a send longer than the
 *                receive the peer posted for it
 *  - -ENOTCONN   QP not connected
 *  - -EBUSY      receive slot still in use
 *  - -ECANCELED  QP destroyed or context detached before completion
 *  - -ETIMEDOUT  the reliability layer gave up (SR / EC modes)
 *  - -EIO        peer or DPU error
 *  - -ECONNABORTED the daemon restarted and the operation could not be
 *                carried over: its QP was not restored (the new daemon
 *                refused it or its identity changed; the reason is in
 *                sdr_last_error()), or it was a streaming send not complete
 *                at the restart
 *  - -EPIPE      (poll functions only) the daemon died and did not come back
 *                within the re-attach window (or re-attach is off); the
 *                operation's fate is unknown
 * libsdr validates every descriptor exactly as the DPU does, so -EINVAL,
 * -EBADF, -ENOENT, -ERANGE and -EBUSY are returned by the post functions
 * themselves and only appear in completions of descriptors injected
 * around libsdr.
 */
#ifndef SDR_H
#define SDR_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every function declared here is exported by libsdr.so (host/libsdr/libsdr.map),
 * which is compiled with -fvisibility=hidden. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

struct sdr_ctx;
struct sdr_mr;
struct sdr_qp;
struct sdr_send_handle;
struct sdr_recv_handle;

/** Default path of the daemon's control socket. */
#define SDR_DEFAULT_SOCKET "/tmp/sdr-dpu.sock"
/** Handles per QP and direction; a handle is reused every SDR_HANDLES messages. */
#define SDR_HANDLES 1024

/* ---------------- context ---------------- */

/** sdr_ctx_attr.reattach_ms: no re-attach; a daemon death is final (-EPIPE). */
#define SDR_REATTACH_OFF UINT32_MAX
/** Re-attach window when neither the attribute nor $SDR_REATTACH_MS sets one. */
#define SDR_REATTACH_DEFAULT_MS 30000u

struct sdr_ctx_attr {
	/** Timeout of one control request (ms); 0 = 5000. */
	uint32_t ctl_timeout_ms;
	/** (2.2) Re-attach window (ms): how long after the daemon died the
	 *  context keeps trying to re-attach to its next incarnation, restoring
	 *  its MRs, QPs and outstanding operations (docs/host-api.md §6).
	 *  0 = the environment variable SDR_REATTACH_MS (ms; 0 there means off),
	 *  else SDR_REATTACH_DEFAULT_MS; SDR_REATTACH_OFF = off: a daemon death
	 *  is final, as in libsdr 2.1 (calls return -EPIPE). */
	uint32_t reattach_ms;
	uint32_t reserved[6]; /**< must be 0 */
};

/**
 * Attach to the daemon listening on @p dpu_socket_path.
 * @param attr may be NULL (defaults).
 * @return a context, or NULL with errno:
 *  EINVAL (bad argument or attr), ENAMETOOLONG (path), ENOMEM,
 *  ENOENT / ECONNREFUSED / EACCES (cannot connect), ETIMEDOUT (daemon does
 *  not answer), EPROTO (malformed response or segment, ABI mismatch), EPIPE
 *  (the daemon hung up), or the daemon's own status: EDQUOT (a per-client
 *  quota: --quota-conns or --quota-ctxs), EUSERS (the daemon's tables are
 *  full). The reason is returned by sdr_last_error(NULL) in the same thread.
 */
struct sdr_ctx *sdr_ctx_open(const char *dpu_socket_path, const struct sdr_ctx_attr *attr);

/** Detach: destroys all QPs, deregisters all MRs, frees all buffers and
 *  closes the socket. @p ctx may be NULL.
 *  Control calls (sdr_mr_reg*, sdr_qp_create, sdr_qp_connect,
 *  sdr_qp_rate_set) made while the daemon restarts wait for the re-attach
 *  (up to the window); sdr_qp_destroy and sdr_mr_dereg then act locally
 *  (docs/host-api.md §6). */
void sdr_ctx_close(struct sdr_ctx *ctx);

/** Human-readable reason of the last failed call on @p ctx (the daemon's
 *  message for control requests), or the state of the last receive that
 *  sdr_recv_poll() / sdr_cq_poll() returned partial or in error, in the
 *  words of the daemon's /ops page ("recv #12 posted 2.3 s ago, 17 of 64
 *  chunks, missing 18-63", behind its status). With @p ctx NULL: the
 *  reason of this thread's last sdr_ctx_open() ("" if it succeeded).
 *  Never NULL. */
const char *sdr_last_error(const struct sdr_ctx *ctx);

/** Description of a status / negative errno of this API. Never NULL. */
const char *sdr_strerror(int status);

/* ---------------- memory ---------------- */

/**
 * Allocate @p len bytes of shareable memory (memfd, mmap'd MAP_SHARED,
 * zero-filled, page aligned). Only such memory (or a user memfd, see
 * sdr_mr_reg_fd()) can be registered: the DPU maps the same pages and
 * places payload directly into them.
 * @return the address, or NULL with errno: EINVAL (len 0 or ctx NULL),
 *  ENOMEM, or an errno of memfd_create/ftruncate/mmap.
 */
void *sdr_buf_alloc(struct sdr_ctx *ctx, size_t len);

/**
 * Free a buffer from sdr_buf_alloc().
 * @return 0, -EINVAL (not a buffer of this context), -EBUSY (an MR on it
 *  is still registered).
 */
int sdr_buf_free(struct sdr_ctx *ctx, void *addr);

/**
 * Register [addr, addr + len) for sends and receives on @p ctx's QPs.
 * The range must lie inside one buffer from sdr_buf_alloc().
 * @param flags must be 0.
 * @return an MR, or NULL with errno: EINVAL (bad argument, range not in an
 *  sdr_buf_alloc() buffer), ENOMEM, EPIPE (daemon gone), ETIMEDOUT,
 *  EPROTO, or the daemon's status (e.g. ENOSPC: MR table full; EDQUOT: the
 *  client's --quota-mr-bytes; the reason is in sdr_last_error()).
 */
struct sdr_mr *sdr_mr_reg(struct sdr_ctx *ctx, void *addr, size_t len, uint32_t flags);

/**
 * Register bytes [offset, offset + len) of the user's memfd @p fd (the fd
 * is passed to the daemon, which maps it; the caller keeps its own fd).
 * @param addr where the caller mapped that range, or NULL (then work
 *  requests must give offsets, not addresses).
 * The memfd must be a plain (shmem) memfd sealed with F_SEAL_SHRINK: the
 * daemon refuses hugetlbfs memfds (MFD_HUGETLB) and files of any other file
 * system with EINVAL, and unsealed ones with EPERM (docs/security.md).
 * @return an MR, or NULL with errno as sdr_mr_reg(); EINVAL also for a
 *  negative fd or len 0.
 */
struct sdr_mr *sdr_mr_reg_fd(struct sdr_ctx *ctx, int fd, uint64_t offset, size_t len, void *addr);

/**
 * Deregister. The MR stays valid when this fails.
 * @return 0, -EINVAL (NULL), -EBUSY (in use by a posted operation),
 *  -EPIPE, -ETIMEDOUT, -EPROTO, or the daemon's status.
 */
int sdr_mr_dereg(struct sdr_mr *mr);

/** The MR's start address (NULL for sdr_mr_reg_fd() without address),
 *  length and daemon id. */
void *sdr_mr_addr(const struct sdr_mr *mr);
size_t sdr_mr_length(const struct sdr_mr *mr);
uint32_t sdr_mr_id(const struct sdr_mr *mr);

/* ---------------- queue pairs ---------------- */

/* sdr_qp_attr::reliability and ec_code are enum sdr_reliability and enum
 * sdr_ec_code (sdr_scheme.h, through sdr_abi.h): SDR_EC_RS, Reed-Solomon
 * (Cauchy, ISA-L), any k of k + m chunks; SDR_EC_XOR, parity i = XOR of data
 * chunks j, j % m == i. sdr_scheme_parse() turns "rs:32:8" (or "sr", ...)
 * into a struct sdr_scheme. */

struct sdr_qp_attr {
	uint32_t max_msg;    /**< bytes per message slot; 0 = daemon default */
	uint32_t chunk_pkts; /**< packets per bitmap chunk; 0 = daemon default */
	uint8_t reliability; /**< enum sdr_reliability: SDR_REL_NONE, SDR_REL_SR
	                           (Selective Repeat on the DPU: a send completes
	                           when the receiver acknowledged every chunk; a
	                           dead peer gives -ETIMEDOUT, then -ENOTCONN;
	                           docs/reliability.md), or SDR_REL_EC (erasure
	                           coding with ec_code/ec_k/ec_m, falling back to
	                           Selective Repeat; same completion semantics), or
	                           SDR_REL_AUTO (the DPU picks SR or an EC code per
	                           message from its RTT and loss estimates, daemon
	                           options --auto-schemes/--auto-objective; ec_* 0;
	                           same completion semantics).
	                           Both QPs must agree (EC: on code, k and m too). */
	union {
		uint8_t reserved8[3]; /**< (old name of the three bytes below) */
		struct {
			uint8_t ec_code; /**< SDR_REL_EC: SDR_EC_RS or SDR_EC_XOR;
			                      else 0 */
			uint8_t ec_k;    /**< SDR_REL_EC: data chunks per submessage,
			                      1..64; else 0 */
			uint8_t ec_m;    /**< SDR_REL_EC: parity chunks per submessage,
			                      1..32 (XOR: <= ec_k); else 0 */
		};
	};
	uint32_t want_qpn;  /**< 0 = allocate; else this QPN block base, of the
	                           daemon's current epoch, or 0x100 + k*G meaning
	                           block k of the current epoch (the QP info tells
	                           the actual QPN) */
	uint32_t want_rkey; /**< 0 = random */
	union {
		uint32_t reserved[3]; /**< (old name of the three words below) */
		struct {
			uint32_t horizon_ms; /**< outage horizon (ABI 2.1): sends
			                            that make no progress (link down,
			                            peer silent) stall, not fail, this
			                            long, then complete -ETIMEDOUT;
			                            0 = the daemon's
			                            --outage-horizon-ms, UINT32_MAX =
			                            never (docs/reliability.md) */
			union {
				uint32_t reserved2[1]; /**< (old name of paths) */
				uint32_t paths;        /**< paths (UDP source ports) its sends
				                     are sprayed over (ABI 2.1;
				                     docs/multipath.md): 0 = the
				                     daemon's --paths, 1..16; a daemon
				                     before it ignores it */
			};
			uint32_t cc; /**< congestion control of its sends
			                            (ABI 2.1; docs/congestion.md):
			                            SDR_QP_CC_DEFAULT (0) = the
			                            daemon's --cc, SDR_QP_CC_OFF,
			                            SDR_QP_CC_ON; a daemon before it
			                            ignores it */
		};
	};
	uint64_t rate_bps; /**< pace this QP's sends (first transmissions and
	                           retransmissions) at this many bit/s of frame
	                           bytes; 0 = unpaced (the daemon's --port-rate
	                           still applies). See sdr_qp_rate_set(). */
};

/**
 * Create a QP.
 * @param attr may be NULL (all defaults).
 * @return a QP, or NULL with errno: EINVAL (a reserved field set,
 *  reliability out of range, EC parameters invalid for SDR_REL_EC or non-zero
 *  for another reliability, rate_bps not 0 or SDR_QP_RATE_MIN ..
 *  SDR_QP_RATE_MAX), ENOMEM, EPIPE, ETIMEDOUT, EPROTO (malformed QP
 *  segment), or the daemon's status (e.g. EADDRINUSE: want_qpn taken,
 *  ENOSPC, EDQUOT: the client's --quota-qps, EOPNOTSUPP: a reliability the
 *  daemon does not implement (firmware before AUTO), EINVAL: max_msg above
 *  the daemon's --max-msg, EC parity (EC, or AUTO's largest candidate)
 *  beyond the daemon's --ec-pool-mb; reason in sdr_last_error()).
 */
struct sdr_qp *sdr_qp_create(struct sdr_ctx *ctx, const struct sdr_qp_attr *attr);

/** Attributes of sdr_qp_create_ext() (LIBSDR_2.3): the attributes of
 *  sdr_qp_create() and what struct sdr_qp_attr has no room for. */
struct sdr_qp_attr_ext {
	uint32_t size;           /**< sizeof(struct sdr_qp_attr_ext) of the caller (a later
	                             libsdr reads only what a smaller struct has) */
	uint32_t channels;       /**< one QP served by this many DPU workers, each with the
	                             stripes of every message it owns (docs/architecture.md
	                             "Channels"): 0 = the daemon's --channels, 1 = an
	                             ordinary QP, 2..SDR_CHANNELS_MAX */
	uint32_t stripe_chunks;  /**< with channels > 1: stripe size S in chunks (mtu *
	                             chunk_pkts bytes), 0 = 1 (chunk i on channel i mod W),
	                             at most 255; both ends must agree */
	uint32_t reserved;       /**< 0 */
	struct sdr_qp_attr attr; /**< as for sdr_qp_create() */
};

/**
 * Create a QP with the extended attributes (LIBSDR_2.3). channels 1 is
 * sdr_qp_create(). A QP of W > 1 channels is W QPs of the daemon ("children"),
 * child c on a context of its own served by worker (w0 + c) mod N, where w0 is
 * @p ctx's worker (libsdr opens these contexts the first time, once per ctx);
 * its sends and receives are posted, polled and completed like any other
 * (completions in posting order); its peer info is W infos
 * (sdr_qp_infos_get(), sdr_qp_connect_infos()); no streams (EOPNOTSUPP).
 * @return a QP, or NULL with errno as sdr_qp_create(), and EINVAL (size too
 *  small, reserved not 0, channels above SDR_CHANNELS_MAX, stripe_chunks above
 *  255), ENOTSUP (channels above the daemon's workers, or a daemon that does
 *  not know channels); the reason in sdr_last_error().
 */
struct sdr_qp *sdr_qp_create_ext(struct sdr_ctx *ctx, const struct sdr_qp_attr_ext *attr);

/** Channels of @p qp (1 for an ordinary QP), or -EINVAL (LIBSDR_2.3). */
int sdr_qp_channels(const struct sdr_qp *qp);

/**
 * The peer infos of @p qp, one per channel, into @p infos[0 .. n-1]
 * (LIBSDR_2.3). @return 0, or -EINVAL (@p n is not the QP's channels).
 * An ordinary QP has one: sdr_qp_info_get().
 */
int sdr_qp_infos_get(const struct sdr_qp *qp, struct sdr_qp_info *infos, unsigned n);

/**
 * Connect every channel c of @p qp to the peer's @p infos[c] (LIBSDR_2.3).
 * Both ends must have the same channels and stripe_chunks (the infos cannot
 * say the stripe: keep the two equal). @return 0, or -EINVAL (@p n is not
 * the QP's channels; reason in sdr_last_error()) or sdr_qp_connect()'s errors.
 */
int sdr_qp_connect_infos(struct sdr_qp *qp, const struct sdr_qp_info *infos, unsigned n);

/**
 * Destroy a QP. Its handles become invalid and its pending completions are
 * discarded (they are not returned by sdr_cq_poll()).
 * @return 0, -EINVAL (NULL), -EPIPE, -ETIMEDOUT, -EPROTO, or the daemon's
 *  status. The local object is freed in every case except -EINVAL.
 */
int sdr_qp_destroy(struct sdr_qp *qp);

/**
 * Change the QP's send rate at run time (bit/s of frame bytes; 0 = unpaced).
 * Takes effect at once: the DPU's pacer (a timing wheel) moves the QP's next
 * departure to the last frame's departure plus its bytes at the new rate.
 * @return 0, -EINVAL (NULL, or not 0 or SDR_QP_RATE_MIN .. SDR_QP_RATE_MAX:
 *  1 Mbit/s .. 10 Tbit/s, the range of sdr_qp_create()), -EPIPE, -ETIMEDOUT,
 *  -EPROTO, or the daemon's status (reason in sdr_last_error()).
 */
int sdr_qp_rate_set(struct sdr_qp *qp, uint64_t rate_bps);

/** Copy the QP's own info (to send to the peer out of band).
 *  @return 0 or -EINVAL. */
int sdr_qp_info_get(const struct sdr_qp *qp, struct sdr_qp_info *info);

/**
 * Connect to the peer QP described by @p remote. Message numbering of both
 * directions starts at 0 at connect.
 * @return 0, -EINVAL (NULL or invalid info: mtu, generations, QPN range),
 *  -EISCONN (already connected), -EPIPE, -ETIMEDOUT, -EPROTO, or the
 *  daemon's status (reason in sdr_last_error()); the daemon also refuses
 *  with EINVAL a peer that is not a unicast address (0.0.0.0/8, broadcast,
 *  multicast, 240/4, loopback), a zero or multicast MAC, a QPN below 0x100,
 *  the QP itself, or one whose parameters disagree with ours.
 */
int sdr_qp_connect(struct sdr_qp *qp, const struct sdr_qp_info *remote);

/* ---------------- sends ---------------- */

struct sdr_send_wr {
	struct sdr_mr *mr;
	const void *addr; /**< start inside mr, or NULL to use @c offset */
	uint64_t offset;  /**< byte offset in mr when addr is NULL */
	uint32_t length;  /**< bytes, 1..max_msg */
	uint32_t imm;     /**< user immediate, delivered with the message; 0 = none
	                         (the message costs no packets for it: docs/host-api.md) */
	uint64_t wr_id;   /**< returned in the completion */
};

/**
 * Post a one-shot send; it is sent once the peer has posted the matching
 * receive (send n lands in receive n).
 * @param h receives the handle (may be NULL).
 * @return 0, or
 *  -EINVAL   NULL qp/wr, mr of another context, addr outside mr
 *  -ENOENT   mr deregistered
 *  -ERANGE   offset + length outside mr
 *  -EMSGSIZE length 0 or > max_msg (ours or the peer's)
 *  -ENOTCONN QP not connected
 *  -EAGAIN   SQ ring full, cq_entries operations outstanding, or the
 *            handle of message n-1024 not yet reaped
 *  -ECONNABORTED the QP was not restored after a daemon restart
 *  -EPIPE    daemon gone for good (re-attach window expired, or off)
 * While the daemon restarts (within the re-attach window) the send is kept
 * and posted to the new daemon: 0 (the SQ ring does not count then).
 */
int sdr_send_post(struct sdr_qp *qp, const struct sdr_send_wr *wr, struct sdr_send_handle **h);

struct sdr_stream_start_wr {
	uint32_t length; /**< total message length, 1..max_msg */
	uint32_t imm;
	uint64_t wr_id;
};

struct sdr_stream_wr {
	struct sdr_mr *mr;
	const void *addr; /**< start inside mr, or NULL to use @c offset */
	uint64_t offset;
	uint32_t length;     /**< bytes, >= 1; a multiple of the MTU unless the
	                          piece ends the message */
	uint32_t msg_offset; /**< where in the message; multiple of the MTU,
	                          msg_offset + length <= total length */
};

/**
 * Open a streaming send of @p wr->length bytes (takes the next send number).
 * Data is supplied with sdr_send_stream_continue(), in any order, any part
 * any number of times (the retransmission primitive); the stream completes
 * (one completion) after sdr_send_stream_end() once all its data is on the
 * wire.
 * @return 0, -EINVAL, -EMSGSIZE, -ENOTCONN, -EAGAIN, -ECONNABORTED, -EPIPE (as
 *  sdr_send_post()); -EAGAIN also while the daemon restarts (a stream's data
 *  is not kept across a restart: one open then completes -ECONNABORTED).
 */
int sdr_send_stream_start(struct sdr_qp *qp, const struct sdr_stream_start_wr *wr,
			  struct sdr_send_handle **h);

/**
 * Send [offset, offset + length) of mr to message bytes
 * [msg_offset, msg_offset + length) of stream @p h.
 * The MTU here is the larger of both ends' MTUs.
 * @return 0, -EINVAL (NULL, not an open stream, msg_offset not a multiple
 *  of the MTU, length not whole packets for a piece that does not end the
 *  message, addr outside mr), -ENOENT, -ERANGE, -EMSGSIZE (length 0 or
 *  past the stream's length), -EAGAIN (SQ ring full), -ECONNABORTED (a
 *  daemon restart aborted the stream), -EPIPE.
 */
int sdr_send_stream_continue(struct sdr_send_handle *h, const struct sdr_stream_wr *wr);

/** Close stream @p h. @return 0, -EINVAL (not an open stream),
 *  -EAGAIN (SQ ring full), -ECONNABORTED (a daemon restart aborted the
 *  stream), -EPIPE. */
int sdr_send_stream_end(struct sdr_send_handle *h);

/**
 * Local send completion (the data is on the wire; the buffer may be reused).
 * Drains the CQ ring if @p h is still pending. When it returns non-zero the
 * completion counts as reaped and sdr_cq_poll() will not return it.
 * @return 1 done, 0 pending, or a negative completion status (see top),
 *  -EPIPE (daemon died while pending), -EINVAL (NULL).
 */
int sdr_send_poll(struct sdr_send_handle *h);

/** Message number of @p h in its QP's send direction. */
uint32_t sdr_send_seq(const struct sdr_send_handle *h);

/* ---------------- receives ---------------- */

struct sdr_recv_wr {
	struct sdr_mr *mr;
	void *addr; /**< start inside mr, or NULL to use @c offset */
	uint64_t offset;
	uint32_t length;   /**< bytes, 1..max_msg (ours); a longer send fails */
	uint32_t reserved; /**< must be 0 */
	uint64_t wr_id;
};

/**
 * Post the next receive (receive n takes send n). Zeroes the slot's chunk
 * bitmap first.
 * @return 0, -EINVAL, -ENOENT, -ERANGE, -EMSGSIZE, -ENOTCONN, -ECONNABORTED,
 *  -EPIPE (as sdr_send_post(); kept while the daemon restarts), -EAGAIN (SQ ring full, cq_entries outstanding, or
 *  receive n-1024 not yet completed and reaped).
 */
int sdr_recv_post(struct sdr_qp *qp, const struct sdr_recv_wr *wr, struct sdr_recv_handle **h);

/**
 * Live chunk bitmap of receive @p h: bit i (bit i%64 of word i/64) is set
 * once chunk i (bytes [i*chunk, (i+1)*chunk) of the message) has landed in
 * the buffer. Read words with acquire ordering (sdr_bitmap_load_shared())
 * before reading the chunk's payload.
 * @param nchunks chunks covering the posted length.
 * @return 0, -EINVAL (NULL).
 */
int sdr_recv_bitmap_get(const struct sdr_recv_handle *h, const uint64_t **bitmap, size_t *nchunks);

/** Chunks of @p h received so far (population count of its bitmap).
 *  @return count, or -EINVAL. */
int sdr_recv_chunks_done(const struct sdr_recv_handle *h);

/** Bytes per bitmap chunk of @p h's QP (chunk_pkts * MTU). */
uint32_t sdr_recv_chunk_bytes(const struct sdr_recv_handle *h);

/** The sender's immediate. @return 0, -EAGAIN (not all 8 nibbles arrived
 *  yet), -EINVAL (NULL). */
int sdr_recv_imm_get(const struct sdr_recv_handle *h, uint32_t *imm);

/**
 * Complete receive @p h now, even if chunks are missing (late packets are
 * then dropped by the DPU). The completion follows on the CQ with
 * SDR_CQE_F_PARTIAL if data was missing (the bitmap was not full) and
 * SDR_CQE_F_IMM_PARTIAL if the immediate was incomplete.
 * @return 0, -EALREADY (already completed or already requested),
 *  -EINVAL (NULL), -EAGAIN (SQ ring full), -EPIPE.
 */
int sdr_recv_complete(struct sdr_recv_handle *h);

/** sdr_recv_poll() results */
#define SDR_POLL_PENDING 0
#define SDR_POLL_DONE \
	1                  /**< every byte of the message arrived (the immediate too,
                                unless the completion has SDR_CQE_F_IMM_PARTIAL) */
#define SDR_POLL_PARTIAL 2 /**< completed with chunks missing (SDR_CQE_F_PARTIAL) */

/**
 * Receive state; drains the CQ ring if @p h is pending. Non-zero results
 * reap the completion (sdr_cq_poll() will not return it).
 * @return SDR_POLL_PENDING, SDR_POLL_DONE, SDR_POLL_PARTIAL, or a negative
 *  completion status, -EPIPE (daemon died while pending), -EINVAL (NULL).
 */
int sdr_recv_poll(struct sdr_recv_handle *h);

/** Message number of @p h in its QP's receive direction. */
uint32_t sdr_recv_seq(const struct sdr_recv_handle *h);

/* ---------------- completions ---------------- */

/** A work completion. */
struct sdr_wc {
	uint64_t wr_id;    /**< the caller's wr_id */
	struct sdr_qp *qp; /**< NULL for a completion libsdr cannot attribute */
	void *handle;      /**< struct sdr_send_handle* / sdr_recv_handle*, or NULL */
	uint32_t seq;      /**< message number */
	uint32_t length;   /**< bytes received (last byte + 1) / sent */
	uint32_t imm;      /**< valid when flags has SDR_CQE_F_IMM */
	int32_t status;    /**< 0 or a negative errno, see the top of this file */
	uint8_t opcode;    /**< SDR_SQ_SEND (sends and streams) or SDR_SQ_RECV; other
	                         enum sdr_sq_op values only for rejected descriptors */
	uint8_t flags;     /**< receives: SDR_CQE_F_PARTIAL (data missing),
	                         SDR_CQE_F_IMM (imm valid), SDR_CQE_F_IMM_PARTIAL
	                         (immediate incomplete); see common/sdr_abi.h */
	uint16_t reserved;
};

/**
 * Drain completions: updates the handles and returns up to @p max work
 * completions, oldest first. @p max 0 only makes progress.
 * @return number of completions (0..max), -EINVAL (NULL, max < 0),
 *  -EPIPE (daemon died and nothing is left to return), -EIO (the CQ ring
 *  is corrupt).
 */
int sdr_cq_poll(struct sdr_ctx *ctx, struct sdr_wc *wc, int max);

/** Counters of one context (for diagnostics). The fields after wc_orphaned
 *  came with 2.2: sdr_ctx_stats_get@LIBSDR_2.2 fills the whole struct, the
 *  programs linked against 2.0/2.1 call sdr_ctx_stats_get@LIBSDR_2, which
 *  fills the eight 2.0 fields only. */
struct sdr_ctx_stats {
	uint64_t sq_posted;     /**< descriptors written to the SQ ring */
	uint64_t sq_full;       /**< posts refused: SQ ring full */
	uint64_t cq_full;       /**< posts refused: cq_entries outstanding */
	uint64_t slot_busy;     /**< posts refused: handle of n-1024 not reaped */
	uint64_t cqe_seen;      /**< CQEs drained */
	uint64_t cqe_unmatched; /**< CQEs not matching an outstanding operation */
	uint64_t wc_dropped;    /**< unmatched completions dropped (queue full) */
	uint64_t wc_orphaned;   /**< completions of destroyed QPs, discarded */
	/* ---- 2.2: re-attach after a daemon restart (docs/host-api.md §6) ---- */
	uint64_t reattaches;       /**< daemon restarts the context re-attached through */
	uint64_t reattach_expired; /**< outages longer than the window (the context died) */
	uint64_t reattach_last_ms; /**< the last outage: daemon death to re-attach (ms) */
	uint64_t qps_restored;     /**< QPs carried over (QP_RESTORE accepted) */
	uint64_t qps_lost;         /**< QPs not carried over (refused, identity changed) */
	uint64_t mrs_lost;         /**< MRs the new daemon refused to register */
	uint64_t ops_replayed;     /**< operations posted again to a new daemon */
	uint64_t ops_aborted;      /**< operations completed -ECONNABORTED by a restart */
	uint64_t wc_duplicate;     /**< completions of operations already complete, dropped */
};
/** @return 0 or -EINVAL. */
int sdr_ctx_stats_get(const struct sdr_ctx *ctx, struct sdr_ctx_stats *st);

/** (2.2) Re-attach state of @p ctx: SDR_CTX_LIVE, SDR_CTX_REATTACHING (the
 *  daemon is gone, the window runs; or it is back and outstanding operations
 *  are still being posted to it again), SDR_CTX_DEAD (-EPIPE from now on),
 *  or -EINVAL (NULL). */
#define SDR_CTX_LIVE 0
#define SDR_CTX_REATTACHING 1
#define SDR_CTX_DEAD 2
int sdr_ctx_state(const struct sdr_ctx *ctx);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* SDR_H */
