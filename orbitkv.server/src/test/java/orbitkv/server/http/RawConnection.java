package orbitkv.server.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One real TCP connection to the HTTP API that sends exactly the bytes a test means, when it means them
 * (slow, pipelined, malformed, a whole body before reading), and reads answers one by one.
 */
final class RawConnection implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    RawConnection(InetSocketAddress address) throws IOException {
        this(connect(address));
    }

    /** Over a socket the caller connected (from a chosen local address, or over TLS). */
    RawConnection(Socket connected) throws IOException {
        socket = connected;
        socket.setSoTimeout(20_000);
        out = socket.getOutputStream();
        in = socket.getInputStream();
    }

    private static Socket connect(InetSocketAddress address) throws IOException {
        Socket s = new Socket();
        s.connect(address, 5000);
        return s;
    }

    RawConnection write(String ascii) throws IOException {
        return write(ascii.getBytes(StandardCharsets.ISO_8859_1));
    }

    RawConnection write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** The next answer; fails if the connection ends before a status line. */
    RawHttp.Response read() throws IOException {
        String statusLine = line();
        if (statusLine == null) {
            throw new IOException("connection closed before a response line");
        }
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String l = line(); l != null && !l.isEmpty(); l = line()) {
            int colon = l.indexOf(':');
            headers.put(l.substring(0, colon).strip().toLowerCase(Locale.ROOT), l.substring(colon + 1).strip());
        }
        int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
        byte[] body = in.readNBytes(length);
        if (status == 100) {
            return read();
        }
        return new RawHttp.Response(status, headers, body);
    }

    /** True if the server closed the connection (end of stream) within {@code bound}, discarding what arrives. */
    boolean closedWithin(Duration bound) throws IOException {
        long until = System.nanoTime() + bound.toNanos();
        byte[] buf = new byte[8192];
        while (System.nanoTime() - until < 0) {
            socket.setSoTimeout((int) Math.max(1, (until - System.nanoTime()) / 1_000_000));
            try {
                if (in.read(buf) < 0) {
                    return true;
                }
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException e) {
                return true; // reset: closed as well
            }
        }
        return false;
    }

    Socket socket() {
        return socket;
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') {
                b.write(c);
            }
        }
        if (c == -1 && b.size() == 0) {
            return null;
        }
        return b.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
