/*
 * The machine's floor for a small HTTP answer: a single-threaded epoll loop that answers every request on a keep-alive
 * connection with /health's exact bytes, parsing nothing but the blank line that ends a request. HttpLoad drives it
 * with the same client and connection counts as walden.jar serve, in the same run: the ratio says what the server
 * costs beyond the kernel's own work (a read, a write and epoll per request), which no server avoids.
 *
 *   gcc -O2 -o http-floor http_floor.c && ./http-floor PORT
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char ANSWER[] = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 18\r\n"
                             "connection: keep-alive\r\n\r\n{\"status\":\"alive\"}";

int main(int argc, char **argv) {
    if (argc != 2) {
        return 2;
    }
    int one = 1;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1])),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listener, (struct sockaddr *) &address, sizeof address) != 0 || listen(listener, 1024) != 0) {
        return 1;
    }
    int epoll = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
    struct epoll_event ready[256];
    static char buffer[1 << 16];
    static char answers[64 * (sizeof ANSWER - 1)];
    for (;;) {
        int n = epoll_wait(epoll, ready, 256, -1);
        for (int i = 0; i < n; i++) {
            int fd = ready[i].data.fd;
            if (fd == listener) {
                int connection = accept4(listener, NULL, NULL, SOCK_NONBLOCK);
                setsockopt(connection, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                struct epoll_event e = {.events = EPOLLIN, .data.fd = connection};
                epoll_ctl(epoll, EPOLL_CTL_ADD, connection, &e);
                continue;
            }
            ssize_t r = read(fd, buffer, sizeof buffer);
            if (r <= 0) {
                close(fd);
                continue;
            }
            int requests = 0;
            for (ssize_t k = 0; k + 3 < r; k++) {
                requests += buffer[k] == '\r' && buffer[k + 1] == '\n' && buffer[k + 2] == '\r' && buffer[k + 3] == '\n';
            }
            for (int done = 0; done < requests; ) {  /* every answer of one read in one write, as pipelining allows */
                int batch = requests - done < 64 ? requests - done : 64;
                for (int b = 0; b < batch; b++) {
                    memcpy(answers + b * (sizeof ANSWER - 1), ANSWER, sizeof ANSWER - 1);
                }
                if (write(fd, answers, batch * (sizeof ANSWER - 1)) < 0) {
                    break;
                }
                done += batch;
            }
        }
    }
}
