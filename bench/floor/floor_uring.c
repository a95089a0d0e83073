/* floor_uring: the smallest io_uring client of a keep-alive GET loop, the
 * floor that netbench's io_uring backend is compared with (bench/clients.py).
 *
 *   cc -O2 -o floor_uring floor_uring.c -luring     (Debian: liburing-dev)
 *   floor_uring HOST PORT CONNECTIONS SECONDS
 *
 * One thread and one ring (SINGLE_ISSUER and DEFER_TASKRUN where the kernel
 * has them), the sockets as registered files, one multishot receive per
 * connection into a ring of provided buffers, each request an
 * IORING_OP_SEND whose completion is skipped on success, and one
 * io_uring_enter per loop turn that submits everything queued and waits for
 * at least one completion. An answer is counted when a connection has
 * received answer_len bytes (floor.h); the buffers are handed back unread.
 * A timeout request ends the run, so the loop never asks the clock.
 */
#include "floor.h"

#include <liburing.h>
#include <sys/mman.h>

/* What a completion is for: the top 32 bits of user_data; the connection's
 * index is the low 32. */
enum { OP_RECV = 1, OP_SEND = 2, OP_END = 3 };
#define BUF_GROUP 0
/* One buffer holds a whole small answer (nginx's is about 150 bytes). */
#define BUF_SIZE 512

static struct io_uring ring;

/* An SQE, submitting what is queued first when the submission queue is full
 * (only while the first requests of thousands of connections go out). */
static struct io_uring_sqe *sqe_for(uint32_t op, uint32_t conn)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    if (!sqe) {
        io_uring_submit(&ring);
        sqe = io_uring_get_sqe(&ring);
    }
    io_uring_sqe_set_data64(sqe, (uint64_t)op << 32 | conn);
    return sqe;
}

static void queue_recv(uint32_t conn)
{
    struct io_uring_sqe *sqe = sqe_for(OP_RECV, conn);
    io_uring_prep_recv_multishot(sqe, (int)conn, NULL, 0, 0);
    sqe->flags |= IOSQE_FIXED_FILE | IOSQE_BUFFER_SELECT;
    sqe->buf_group = BUF_GROUP;
}

static void queue_send(uint32_t conn, const struct floor_plan *p)
{
    struct io_uring_sqe *sqe = sqe_for(OP_SEND, conn);
    io_uring_prep_send(sqe, (int)conn, p->request, p->request_len, 0);
    sqe->flags |= IOSQE_FIXED_FILE | IOSQE_CQE_SKIP_SUCCESS;
}

static unsigned pow2_at_least(unsigned n)
{
    unsigned v = 1;
    while (v < n)
        v <<= 1;
    return v;
}

int main(int argc, char **argv)
{
    struct floor_plan p = floor_plan("floor_uring", argc, argv);
    /* SECONDS count from before the connects, as wrk's -d does. */
    double start = floor_now();
    int *fds = floor_connect_all(&p);
    unsigned conns = (unsigned)p.connections;
    size_t *pending = calloc(conns, sizeof *pending);
    uint64_t answers = 0, bytes = 0, errors = 0;
    if (!pending)
        floor_die_sys(&p, FLOOR_USAGE, "calloc");

    /* Every connection has at most one receive and one failed send to
     * report at a time: room for both, so the completion queue never
     * overflows. */
    struct io_uring_params params = {
        .flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER |
                 IORING_SETUP_DEFER_TASKRUN,
        .cq_entries = pow2_at_least(2 * conns + 8),
    };
    unsigned sq_entries = pow2_at_least(conns + 2 < 4096 ? conns + 2 : 4096);
    const char *mode = "io_uring";
    int ret = io_uring_queue_init_params(sq_entries, &ring, &params);
    if (ret == -EINVAL) { /* a kernel before 6.1: without the two task-run flags */
        params.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL;
        mode = "io_uring (without SINGLE_ISSUER and DEFER_TASKRUN)";
        ret = io_uring_queue_init_params(sq_entries, &ring, &params);
    }
    if (ret < 0) {
        errno = -ret;
        floor_die_sys(&p, FLOOR_UNSUPPORTED, "io_uring_queue_init_params");
    }
    if ((ret = io_uring_register_files(&ring, fds, conns)) < 0) {
        errno = -ret;
        floor_die_sys(&p, FLOOR_UNSUPPORTED, "io_uring_register_files");
    }

    /* The provided buffers: up to one per connection can be in the
     * completions of one turn before the loop hands them back. */
    unsigned nbufs = pow2_at_least(conns < 32768 ? conns : 32768);
    if (nbufs < 8)
        nbufs = 8;
    int mask = io_uring_buf_ring_mask(nbufs);
    size_t ring_bytes = nbufs * sizeof(struct io_uring_buf);
    struct io_uring_buf_ring *br =
        mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    char *bufs = malloc((size_t)nbufs * BUF_SIZE);
    if (br == MAP_FAILED || !bufs)
        floor_die_sys(&p, FLOOR_USAGE, "mmap or malloc of the buffers");
    struct io_uring_buf_reg reg = {
        .ring_addr = (uint64_t)(uintptr_t)br, .ring_entries = nbufs, .bgid = BUF_GROUP};
    if ((ret = io_uring_register_buf_ring(&ring, &reg, 0)) < 0) {
        errno = -ret;
        floor_die_sys(&p, FLOOR_UNSUPPORTED, "io_uring_register_buf_ring");
    }
    io_uring_buf_ring_init(br);
    for (unsigned b = 0; b < nbufs; b++)
        io_uring_buf_ring_add(br, bufs + (size_t)b * BUF_SIZE, BUF_SIZE, (unsigned short)b, mask,
                              (int)b);
    io_uring_buf_ring_advance(br, (int)nbufs);

    /* Absolute, on CLOCK_MONOTONIC (a timeout's clock unless told otherwise). */
    struct timespec end = floor_timespec(start + p.seconds);
    struct __kernel_timespec run = {.tv_sec = end.tv_sec, .tv_nsec = end.tv_nsec};
    io_uring_prep_timeout(sqe_for(OP_END, 0), &run, 0, IORING_TIMEOUT_ABS);
    for (unsigned i = 0; i < conns; i++) {
        queue_recv(i);
        queue_send(i, &p);
    }

    for (;;) {
        ret = io_uring_submit_and_wait(&ring, 1);
        if (ret < 0 && ret != -EINTR && ret != -ETIME && ret != -EBUSY) {
            errno = -ret;
            floor_die_sys(&p, FLOOR_USAGE, "io_uring_submit_and_wait");
        }
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        int returned = 0; /* buffers handed back this turn */
        io_uring_for_each_cqe(&ring, head, cqe) {
            seen++;
            uint32_t op = (uint32_t)(cqe->user_data >> 32), conn = (uint32_t)cqe->user_data;
            if (op == OP_END) {
                floor_report(&p, mode, floor_now() - start, answers, bytes, errors);
                return FLOOR_OK;
            }
            if (op == OP_SEND) { /* only failures complete (CQE_SKIP_SUCCESS) */
                errors++;
                continue;
            }
            if (cqe->res > 0) {
                unsigned short bid = (unsigned short)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
                io_uring_buf_ring_add(br, bufs + (size_t)bid * BUF_SIZE, BUF_SIZE, bid, mask,
                                      returned++);
                bytes += (uint64_t)cqe->res;
                pending[conn] += (size_t)cqe->res;
                if (pending[conn] >= p.answer_len) {
                    answers += pending[conn] / p.answer_len;
                    pending[conn] %= p.answer_len;
                    queue_send(conn, &p);
                }
            }
            if (!(cqe->flags & IORING_CQE_F_MORE)) {
                /* The multishot receive ended: out of buffers (or a data
                 * receive the kernel chose to end) is re-armed; end of
                 * stream or an error drops the connection. */
                if (cqe->res > 0 || cqe->res == -ENOBUFS)
                    queue_recv(conn);
                else
                    errors++;
            }
        }
        io_uring_buf_ring_advance(br, returned);
        io_uring_cq_advance(&ring, seen);
    }
}
