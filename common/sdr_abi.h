/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host <-> DPU ABI of sdr-dpu: the unix-socket control protocol, the shared
 * segments (rings, completion queue, receive bitmaps) and the descriptors.
 * Pure C, no DPDK. Bump SDR_ABI_MAJOR on any incompatible change.
 *
 * Control path (blocking, rare): request/response messages over the
 * daemon's SOCK_SEQPACKET unix socket; file descriptors (memfds) travel with
 * SCM_RIGHTS.
 * Data path (non-blocking, hot): the host writes struct sdr_sqe into the
 * context's SQ ring; the DPU writes struct sdr_cqe into the CQ ring and sets
 * bits in the per-QP receive bitmaps.
 *
 * The DPU never trusts anything the host wrote: ring indices, descriptors,
 * lengths, ids are all validated (see firmware/loop/host_sq.c).
 */
#ifndef SDR_ABI_H
#define SDR_ABI_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "sdr_ring.h"
#include "sdr_scheme.h" /* enum sdr_reliability, EC parameters, sdr_ec_param_*() */

#define SDR_ABI_MAJOR 2 /* 2: qp_info ctrl_key */
#define SDR_ABI_MINOR 1 /* 1: QP_RESTORE, restore tokens, outage horizon, SQE resume flags */

/* ================= control socket ================= */

#define SDR_CTL_MAGIC 0x5344524Cu /* "SDRL" */

enum sdr_ctl_type {
	SDR_CTL_HELLO = 1,   /**< req: abi; resp: ctx segment fd + sizes */
	SDR_CTL_MR_REG,      /**< req + memfd: fd_offset, length; resp: mr_id */
	SDR_CTL_MR_DEREG,    /**< req: mr_id */
	SDR_CTL_QP_CREATE,   /**< req: qp attr; resp: qp_id, info, qp segment fd */
	SDR_CTL_QP_CONNECT,  /**< req: qp_id, remote info */
	SDR_CTL_QP_DESTROY,  /**< req: qp_id */
	SDR_CTL_QP_SET_RATE, /**< req: qp_id, rate (reserved for pacing) */
	SDR_CTL_QP_RESTORE,  /**< (2.1) req + the QP's segment fd: attr, remote, restore;
	                          resp: qp_id, info (the same identity) */
	SDR_CTL__MAX
};

/** What a peer needs to know to send to a QP (exchanged out of band).
 *  Portable text form: see sdr_qp_info_format()/sdr_qp_info_parse(). */
struct sdr_qp_info {
	uint32_t qpn;        /**< base of the QPN block (24 bit) */
	uint32_t rkey;       /**< R_Key of the QP's zero-based window */
	uint32_t ip;         /**< DPU IPv4, host order */
	uint8_t mac[6];      /**< DPU MAC */
	uint16_t mtu;        /**< 1024, 2048 or 4096 */
	uint32_t max_msg;    /**< M: bytes per message slot */
	uint32_t chunk_pkts; /**< packets per bitmap chunk */
	uint8_t generations; /**< QPNs in the block */
	uint8_t reliability; /**< enum sdr_reliability */
	uint16_t ec;         /**< reliability EC: code, k, m packed by
	                            sdr_ec_param_pack() (sdr_scheme_ec());
	                            0 otherwise */
	uint64_t ctrl_key;   /**< 64-bit secret drawn at random per QP: every
	                            control packet sent to this QP carries it
	                            (docs/security.md); keep it as secret as the
	                            R_Key */
};

/** Range of a QP's rate_bps, the same at QP_CREATE and QP_SET_RATE: 0 =
 *  unpaced, else SDR_QP_RATE_MIN..SDR_QP_RATE_MAX bit/s. */
#define SDR_QP_RATE_MIN 1000000ull        /* 1 Mbit/s */
#define SDR_QP_RATE_MAX 10000000000000ull /* 10 Tbit/s */

struct sdr_qp_attr_abi {
	uint32_t max_msg;    /**< 0 = daemon default */
	uint32_t chunk_pkts; /**< 0 = daemon default */
	uint8_t reliability; /**< enum sdr_reliability: NONE, SR, EC or AUTO */
	uint8_t ec_code;     /**< EC: enum sdr_ec_code; 0 otherwise */
	uint8_t ec_k, ec_m;  /**< EC: data / parity chunks per submessage; 0 otherwise */
	uint64_t rate_bps;   /**< 0 = unpaced (reserved for pacing) */
	uint32_t want_qpn;   /**< 0 = allocate; else this QPN block base (must be
	                           aligned to the generation count and free) */
	uint32_t want_rkey;  /**< 0 = random */
};

/** A restore token proves, at QP_RESTORE, that the requester is the client
 *  that created the QP (docs/security.md "Restoring a QP"). Opaque to the
 *  host: the daemon derives it from its instance key, the QP's identity and
 *  the creator's uid, so a restarted daemon can check it without remembering
 *  anything but that key. */
#define SDR_RESTORE_TOKEN_LEN 16

/** QP_RESTORE (2.1): re-create a QP of an earlier incarnation of this daemon
 *  after a restart, with the same identity, from what the host kept. */
struct sdr_qp_restore_abi {
	struct sdr_qp_info local;             /**< the QP's info as QP_CREATE returned it */
	uint8_t token[SDR_RESTORE_TOKEN_LEN]; /**< as QP_CREATE returned it */
	uint32_t send_base;                   /**< first send the host does not know completed: the
	                         host re-posts every send from here on */
	uint32_t recv_base;                   /**< same for receives */
	uint8_t connected;                    /**< 1: connect to @c remote of the request as well */
	uint8_t pad[7];
};

/** struct sdr_ctl_req::paths: most paths (UDP source ports) of one QP. */
#define SDR_PATHS_MAX 16

/** struct sdr_ctl_req::cc (2.1): a QP's congestion control. */
#define SDR_QP_CC_DEFAULT 0 /**< the daemon's --cc */
#define SDR_QP_CC_OFF 1     /**< paced at its configured rate */
#define SDR_QP_CC_ON 2      /**< paced at the rate its controller learns */

struct sdr_ctl_req {
	uint32_t magic;
	uint16_t type;
	uint16_t abi_major;
	uint32_t abi_minor;
	uint32_t qp_id;
	uint32_t mr_id;
	uint32_t want_worker; /**< HELLO: 0 = the daemon's round robin; w + 1 = worker w
	                           mod N (a channel context, docs/architecture.md
	                           "Channels"; a daemon before it ignores it: see
	                           resp.ext) */
	uint64_t fd_offset;
	uint64_t length;
	struct sdr_qp_attr_abi qp_attr;
	struct sdr_qp_info remote;
	/* ---- 2.1: a 2.0 request ends here (SDR_CTL_REQ_SIZE_2_0 bytes; the
	 * daemon takes either size, the new fields zero for a 2.0 host) ---- */
	uint32_t horizon_ms; /**< QP_CREATE / QP_RESTORE: outage horizon of the QP
	                          (ms); 0 = the daemon's --outage-horizon-ms */
	uint8_t cc;          /**< QP_CREATE / QP_RESTORE: congestion control of the QP's
	                 sends, SDR_QP_CC_*; 0 = the daemon's --cc */
	uint8_t paths;       /**< QP_CREATE / QP_RESTORE: paths (UDP source ports) its
	                 sends are sprayed over, 1..16 (docs/multipath.md); 0 = the
	                 daemon's --paths */
	uint8_t chan;        /**< QP_CREATE / QP_RESTORE: 0 = an ordinary QP; else channel c of a
	                   group of W (SDR_CHAN_W(), SDR_CHAN_C()): the QP's messages are
	                   the bytes of the stripe map (W, c, S), common/sdr_stripe.h */
	uint8_t stripe;      /**< with chan: stripe bytes S in chunks (mtu * chunk_pkts); 0 = 1 */
	struct sdr_qp_restore_abi restore; /**< QP_RESTORE */
};
#define SDR_CTL_REQ_SIZE_2_0 offsetof(struct sdr_ctl_req, horizon_ms)

/** Most channels of one QP (struct sdr_ctl_req::chan, sdr_qp_create_ext()). */
#define SDR_CHANNELS_MAX 8

/** struct sdr_ctl_req::chan of channel @p c of @p w, and its parts. */
#define SDR_CHAN(w, c) ((uint8_t)(((w) << 4) | (c)))
#define SDR_CHAN_W(chan) ((unsigned)(chan) >> 4)
#define SDR_CHAN_C(chan) ((unsigned)(chan)&0xFu)

/** struct sdr_ctl_resp::ext: what a daemon that knows channels answers
 *  (an older one leaves it 0). HELLO: the context's worker, the number of
 *  workers and the daemon's --channels; QP_CREATE / QP_RESTORE: chan and
 *  stripe as it applied them. */
#define SDR_EXT_VALID 0x80000000u
#define SDR_EXT_HELLO(worker, nworkers, chans) \
	(SDR_EXT_VALID | (uint32_t)(worker) | (uint32_t)(nworkers) << 8 | (uint32_t)(chans) << 16)
#define SDR_EXT_WORKER(ext) ((ext)&0xFFu)
#define SDR_EXT_NWORKERS(ext) (((ext) >> 8) & 0xFFu)
#define SDR_EXT_CHANNELS(ext) (((ext) >> 16) & 0xFFu)
#define SDR_EXT_QP(chan, stripe) (SDR_EXT_VALID | (uint32_t)(chan) | (uint32_t)(stripe) << 8)

/** Response; @c status is 0 or a negative errno. */
struct sdr_ctl_resp {
	uint32_t magic;
	uint16_t type;
	uint16_t pad0;
	int32_t status;
	uint32_t id;       /**< mr_id or qp_id */
	uint64_t seg_size; /**< size of the segment whose fd comes with this */
	struct sdr_qp_info info;
	char msg[128]; /**< human-readable reason when status != 0 */
	/* ---- 2.1: the daemon answers a 2.0-sized request with a 2.0-sized
	 * response (SDR_CTL_RESP_SIZE_2_0 bytes) ---- */
	uint8_t token[SDR_RESTORE_TOKEN_LEN]; /**< QP_CREATE, QP_RESTORE: the QP's
	                                           restore token */
	uint32_t horizon_ms;                  /**< QP_CREATE, QP_RESTORE: the QP's outage horizon */
	uint32_t ext;                         /**< SDR_EXT_* (0 from a daemon before channels) */
};
#define SDR_CTL_RESP_SIZE_2_0 offsetof(struct sdr_ctl_resp, token)

/* ================= context segment ================= */

#define SDR_SEG_MAGIC 0x53445253u /* "SDRS" */
#define SDR_SQ_ENTRIES 1024
#define SDR_CQ_ENTRIES 4096

/** Head of the per-context shared segment. Written once by the DPU at
 *  attach (read-only for the host afterwards, except the rings). */
struct sdr_seg_hdr {
	uint32_t magic;
	uint16_t abi_major;
	uint16_t abi_minor;
	uint64_t seg_size;
	uint32_t sq_entries, sq_esize;
	uint32_t cq_entries, cq_esize;
	uint64_t sq_idx_off, sq_off; /**< byte offsets from the segment start */
	uint64_t cq_idx_off, cq_off;
	/** DPU heartbeat: incremented by the owning worker; lets a host notice
	 *  a dead daemon. */
	alignas(SDR_CACHE_LINE) _Atomic uint64_t heartbeat;
};

/* ---- submission descriptor: host -> DPU, 64 bytes ---- */
enum sdr_sq_op {
	SDR_SQ_SEND = 1,          /**< one-shot send of [offset, offset+length) of mr */
	SDR_SQ_RECV = 2,          /**< post a receive buffer */
	SDR_SQ_RECV_COMPLETE = 3, /**< complete receive @c seq now (partial allowed) */
	SDR_SQ_STREAM_START = 4,  /**< open a streaming send of @c length bytes */
	SDR_SQ_STREAM_DATA = 5,   /**< @c length bytes from mr/offset to msg_offset */
	SDR_SQ_STREAM_END = 6,    /**< no more data for stream @c seq */
};

/* SQE flags (2.1), only on a QP made by QP_RESTORE, only on the descriptors
 * that re-post what the host posted to the earlier incarnation (the DPU
 * refuses them elsewhere, sqe_bad_flags): */
/** RECV: keep the slot's bitmap, chunks_set and immediate in the QP segment
 *  (the host did not clear them); chunks already set count as received. */
#define SDR_SQE_F_RESUME 0x01
/** SEND or RECV that completed before the restart: it takes its message
 *  number and completes at once, without a CQE and without packets. A RECV
 *  keeps its bitmap (F_RESUME implied): the DPU answers the sender's
 *  retransmissions with the final state it shows (FULL when full). */
#define SDR_SQE_F_DONE 0x02

struct sdr_sqe {
	uint8_t opcode; /**< enum sdr_sq_op */
	uint8_t flags;  /**< 0, or SDR_SQE_F_* on a restored QP */
	uint16_t qp_id;
	uint32_t mr_id;
	uint64_t wr_id;      /**< opaque to the DPU, echoed in the CQE */
	uint64_t offset;     /**< byte offset within the MR */
	uint32_t length;     /**< bytes */
	uint32_t imm;        /**< user immediate (SEND, STREAM_START) */
	uint32_t seq;        /**< message number (RECV_COMPLETE, STREAM_DATA/END) */
	uint32_t msg_offset; /**< STREAM_DATA: byte offset in the message (MTU aligned) */
	uint8_t reserved[24];
};
_Static_assert(sizeof(struct sdr_sqe) == 64, "sqe is 64 bytes");

/* ---- completion: DPU -> host, 32 bytes ---- */
#define SDR_CQE_F_PARTIAL 0x01 /**< receive completed with data missing (bitmap not full) */
#define SDR_CQE_F_IMM 0x02     /**< @c imm holds the whole user immediate */
#define SDR_CQE_F_IMM_PARTIAL \
	0x04 /**< receive completed before all 8 nibbles of the
                                        immediate arrived (@c imm incomplete, no F_IMM) */

struct sdr_cqe {
	uint64_t wr_id;
	uint32_t seq;    /**< message number within the QP and direction */
	uint32_t length; /**< bytes received (last byte + 1) / sent */
	uint32_t imm;
	int32_t status; /**< 0 or negative errno, see sdr.h */
	uint16_t qp_id;
	uint8_t opcode; /**< the enum sdr_sq_op it completes (SEND for streams too) */
	uint8_t flags;
	uint32_t reserved;
};
_Static_assert(sizeof(struct sdr_cqe) == 32, "cqe is 32 bytes");

/* ================= QP segment: receive bitmaps ================= */

#define SDR_QSEG_MAGIC 0x53445232u /* "SDR2": slots of 32 bytes with msg_len (was "SDRQ", 16) */

/** Head of the per-QP shared segment: SDR_MAX_MSGS receive slots, each with
 *  a chunk bitmap of @c bitmap_words 64-bit words. */
struct sdr_qseg_hdr {
	uint32_t magic;
	uint32_t slots;        /**< 1024 */
	uint32_t bitmap_words; /**< per slot */
	uint32_t chunk_bytes;
	uint64_t slot_off;   /**< offset of struct sdr_qseg_slot[slots] */
	uint64_t bitmap_off; /**< offset of uint64_t[slots][bitmap_words] */
};

/** Live per-slot state the host may read (DPU-written). */
struct sdr_qseg_slot {
	_Atomic uint32_t seq;        /**< receive number that owns the slot now */
	_Atomic uint32_t chunks_set; /**< chunk bits set so far */
	_Atomic uint32_t imm_mask;   /**< nibbles of the user immediate received */
	_Atomic uint32_t imm;        /**< user immediate, valid nibbles per imm_mask */
	_Atomic uint32_t msg_len;    /**< the message's length once its end is known
	                                  (0: not yet); a restarted daemon resumes
	                                  the receive from it with the bitmap */
	uint32_t reserved[3];
};
_Static_assert(sizeof(struct sdr_qseg_slot) == 32, "qseg slot is 32 bytes");

/* ================= helpers (common/sdr_abi.c) ================= */
#include <stddef.h>

/* Part of libsdr's API (host/libsdr/libsdr.map): default visibility, also when
 * compiled with -fvisibility=hidden. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/** Text form of a QP info, one token, for command lines and logs:
 *  "qpn=0x000100,rkey=0x1a2b3c4d,key=0x0123456789abcdef,ip=10.0.0.1,
 *  mac=02:00:00:00:00:01,mtu=4096,max_msg=67108864,chunk_pkts=16,gen=4,rel=0".
 *  @return characters written (excluding NUL), or -1 if @p len is too small. */
int sdr_qp_info_format(const struct sdr_qp_info *info, char *buf, size_t len);
/** Parse the text form (keys in any order, all required except rel and ec).
 *  @return 0, or -1 with nothing guaranteed in @p info. */
int sdr_qp_info_parse(const char *s, struct sdr_qp_info *info);

/** Fixed 40-byte big-endian serialisation for TCP bootstrap exchange
 *  (layout in sdr_abi.c and docs/host-api.md §8). */
#define SDR_QP_INFO_WIRE 40
void sdr_qp_info_encode(const struct sdr_qp_info *info, uint8_t out[SDR_QP_INFO_WIRE]);
int sdr_qp_info_decode(const uint8_t in[SDR_QP_INFO_WIRE], struct sdr_qp_info *info);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif /* SDR_ABI_H */
