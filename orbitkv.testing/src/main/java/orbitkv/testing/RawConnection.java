package orbitkv.testing;

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
 * (slow, pipelined, malformed, a whole body before reading), and reads answers one by one. The one raw-connection
 * helper of every module's tests (issue 34 item 6; the HTTP hardening and shutdown-drain gates had their own).
 */
public final class RawConnection implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    /** The read timeout unless told: a failing read ends a test after it. */
    public static final Duration READ_TIMEOUT = Duration.ofSeconds(20);

    public RawConnection(InetSocketAddress address) throws IOException {
        this(connect(address), READ_TIMEOUT);
    }

    /** A connection whose reads give up after {@code readTimeout}. */
    public RawConnection(InetSocketAddress address, Duration readTimeout) throws IOException {
        this(connect(address), readTimeout);
    }

    /** Over a socket the caller connected (from a chosen local address, or over TLS). */
    public RawConnection(Socket connected) throws IOException {
        this(connected, READ_TIMEOUT);
    }

    private RawConnection(Socket connected, Duration readTimeout) throws IOException {
        socket = connected;
        socket.setSoTimeout((int) readTimeout.toMillis());
        out = socket.getOutputStream();
        in = socket.getInputStream();
    }

    private static Socket connect(InetSocketAddress address) throws IOException {
        Socket s = new Socket();
        s.connect(address, 5000);
        return s;
    }

    public RawConnection write(String ascii) throws IOException {
        return write(ascii.getBytes(StandardCharsets.ISO_8859_1));
    }

    public RawConnection write(byte[] bytes) throws IOException {
        return write(bytes, 0, bytes.length);
    }

    /** {@code bytes[from, to)}. */
    public RawConnection write(byte[] bytes, int from, int to) throws IOException {
        out.write(bytes, from, to - from);
        out.flush();
        return this;
    }

    /** The next answer; fails if the connection ends before a status line or inside the body. */
    public RawHttp.Response read() throws IOException {
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
        if (body.length != length) {
            throw new IOException("answer body cut at " + body.length + " of " + length + " bytes");
        }
        if (status == 100) {
            return read();
        }
        return new RawHttp.Response(status, headers, body);
    }

    /** True if the server closed the connection (end of stream) within {@code bound}, discarding what arrives. */
    public boolean closedWithin(Duration bound) throws IOException {
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

    public Socket socket() {
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
