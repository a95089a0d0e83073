/* floor_epoll: the smallest epoll client of a keep-alive GET loop, the
 * floor that netbench's CPU per request is compared with (bench/clients.py).
 *
 *   cc -O2 -o floor_epoll floor_epoll.c
 *   floor_epoll HOST PORT CONNECTIONS SECONDS
 *
 * One thread, level-triggered epoll, one read(2) per readable connection and
 * one write(2) per request; an answer is counted when a connection has
 * received answer_len bytes (floor.h), and the next request goes out at once.
 * A timerfd in the same epoll set ends the run, so the loop never asks the
 * clock.
 */
#include "floor.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

int main(int argc, char **argv)
{
    struct floor_plan p = floor_plan("floor_epoll", argc, argv);
    /* SECONDS count from before the connects, as wrk's -d does. */
    double start = floor_now();
    int *fds = floor_connect_all(&p);
    /* Bytes of the answer in progress on each connection. */
    size_t *pending = calloc((size_t)p.connections, sizeof *pending);
    uint64_t answers = 0, bytes = 0, errors = 0;

    int ep = epoll_create1(0);
    int timer = timerfd_create(CLOCK_MONOTONIC, 0);
    if (ep < 0 || timer < 0 || !pending)
        floor_die_sys(&p, FLOOR_USAGE, "epoll_create1, timerfd_create or calloc");
    struct itimerspec run = {.it_value = floor_timespec(start + p.seconds)};
    /* The timer's event carries the index one past the last connection. */
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)p.connections};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, timer, &ev) != 0)
        floor_die_sys(&p, FLOOR_USAGE, "epoll_ctl");

    timerfd_settime(timer, TFD_TIMER_ABSTIME, &run, NULL);
    for (int i = 0; i < p.connections; i++) {
        fcntl(fds[i], F_SETFL, O_NONBLOCK);
        ev.data.u64 = (uint64_t)i;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) != 0)
            floor_die_sys(&p, FLOOR_USAGE, "epoll_ctl");
        if (write(fds[i], p.request, p.request_len) != (ssize_t)p.request_len)
            errors++;
    }

    static struct epoll_event events[1024];
    static char buf[16384];
    for (;;) {
        int n = epoll_wait(ep, events, 1024, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            floor_die_sys(&p, FLOOR_USAGE, "epoll_wait");
        for (int k = 0; k < n; k++) {
            uint64_t i = events[k].data.u64;
            if (i == (uint64_t)p.connections) {
                floor_report(&p, "epoll", floor_now() - start, answers, bytes, errors);
                return FLOOR_OK;
            }
            ssize_t r = read(fds[i], buf, sizeof buf);
            if (r < 0 && errno == EAGAIN)
                continue;
            if (r <= 0) { /* closed or failed: counted, and the connection is dropped */
                errors++;
                close(fds[i]); /* also takes it out of the epoll set */
                continue;
            }
            bytes += (uint64_t)r;
            pending[i] += (size_t)r;
            if (pending[i] < p.answer_len)
                continue;
            answers += pending[i] / p.answer_len;
            pending[i] %= p.answer_len;
            if (write(fds[i], p.request, p.request_len) != (ssize_t)p.request_len)
                errors++;
        }
    }
}
