<?php
// netbench front controller (contract/CONTRACT.md): nginx passes every
// request here over FastCGI (run.sh writes the configuration). nginx does the
// HTTP: keep-alive, Connection: close, de-chunking request bodies, the Date
// header, framing the answer. The optional mode of `/` ("0" or "1") comes in
// the FastCGI parameter NETBENCH_ROOT.

declare(strict_types=1);

require __DIR__ . '/work.php';

function answer(int $status, string $type, string $body): void
{
    http_response_code($status);
    header('Content-Type: ' . $type);
    echo $body;
}

function allowed(array $methods): bool
{
    if (in_array($_SERVER['REQUEST_METHOD'], $methods, true)) {
        return true;
    }
    header('Allow: ' . implode(', ', $methods));
    answer(405, 'text/plain', 'method not allowed');
    return false;
}

function blank(): void
{
    if (allowed(['GET', 'HEAD'])) {
        answer(200, 'text/plain', 'OK');
    }
}

function work(): void
{
    if (allowed(['POST'])) {
        answer(...netbench_work(file_get_contents('php://input')));
    }
}

// REQUEST_URI is the request target as sent: the path, then the query.
$path = explode('?', $_SERVER['REQUEST_URI'], 2)[0];
$root = $_SERVER['NETBENCH_ROOT'] ?? '';

if ($path === '/blank') {
    blank();
} elseif ($path === '/work') {
    work();
} elseif (str_starts_with($path, '/echo/')) {
    if (allowed(['GET', 'HEAD'])) {
        answer(200, 'text/plain', substr($path, strlen('/echo/')));
    }
} elseif ($path === '/' && $root === '0') {
    blank();
} elseif ($path === '/' && $root === '1') {
    work();
} else {
    answer(404, 'text/plain', 'not found');
}
