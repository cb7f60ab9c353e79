// Request headers past the limit get 431 Request Header Fields Too Large on HTTP/1.1 and HTTP/2 alike,
// as Go's net/http answers, instead of a reset that looks like a network fault:
// - HTTP/1.1: Node's parser stops at http.maxHeaderSize (16 KiB) and reports HPE_HEADER_OVERFLOW. Its own
//   handler writes a 431 and destroys the socket at once, which over TLS loses the answer and on plain TCP
//   with the rest of the headers unread sends a RST: here the answer is written, the connection half
//   closed, and what the client still sends is read and dropped until it closes (or a few seconds pass).
// - HTTP/2: nghttp2 refuses a stream whose header list is above SETTINGS_MAX_HEADER_LIST_SIZE with
//   REFUSED_STREAM, no status. The server advertises a larger list (1 MiB, Go's DefaultMaxHeaderBytes),
//   so such a request arrives, and answers 431 itself above the HTTP/1.1 limit.
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/** Header bytes a request may carry (names and values, as HTTP/1.1 counts them: Node's limit). */
export const MAX_REQUEST_HEADER_BYTES = maxHeaderSize;
/** The header list an HTTP/2 client may send so that a too-large one can still be answered 431. */
export const HTTP2_MAX_HEADER_LIST_SIZE = 1024 * 1024;
/** How long the rest of a refused request is read and dropped before the connection is closed anyway. */
const LINGER_MS = 5_000;

/** Sockets answered and being drained: the parser may report the same error again for the bytes still coming. */
const answered = new WeakSet<Socket>();

/** Node's `clientError` handler for HTTP/1.1 parse errors: 431 for oversize headers, 400 for the rest. */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // Node's server keeps feeding what arrives after the error to its parser, which reports it again: over
  // TLS (16 KiB records) nearly always. Destroying the socket then, with the rest of the request unread,
  // reset the connection before the client read the 431 (curl: exit 56, http_code 000, 6 runs in 10).
  if (answered.has(socket)) return;
  if (!socket.writable || socket.bytesWritten > 0 || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW' ? 413 : 400;
  const body = `${(STATUS_CODES[status] ?? 'Bad Request').toLowerCase()}${status === 431 ? `: request headers above ${MAX_REQUEST_HEADER_BYTES} bytes` : ''}\n`;
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  answered.add(socket);
  // Read and drop the rest, so closing with unread bytes does not reset the connection before the client
  // read the answer; the server's parser no longer sees it.
  socket.removeAllListeners('data');
  socket.on('data', () => undefined);
  socket.resume();
  socket.setTimeout(LINGER_MS, () => socket.destroy());
}

/** Bytes of a request's headers as HTTP/1.1 would count them (name, ": ", value, CRLF), from rawHeaders. */
export function headerBytes(rawHeaders: readonly string[]): number {
  let bytes = 0;
  // Each pair is `name: value\r\n`: its two strings plus four bytes.
  for (let i = 0; i < rawHeaders.length; i++) bytes += Buffer.byteLength(rawHeaders[i] as string) + 2;
  return bytes;
}
