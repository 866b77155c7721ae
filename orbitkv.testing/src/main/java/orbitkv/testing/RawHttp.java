package orbitkv.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A deliberately small HTTP/1.1 client over a socket, so tests can send exactly the bytes they mean
 * (wrong lengths, chunked bodies, bad content types). One request per connection. Shared by every module's tests
 * (issue 34 item 6), with {@link RawConnection} for connections that carry several answers.
 */
public final class RawHttp {
    public record Response(int status, Map<String, String> headers, byte[] body) {
        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    private final InetSocketAddress address;

    public RawHttp(InetSocketAddress address) {
        this.address = address;
    }

    public Response get(String path) throws IOException {
        return send("GET", path, null, null, null);
    }

    public Response post(String path, String contentType, byte[] body) throws IOException {
        return send("POST", path, contentType, body, null);
    }

    public Response postJson(String path, String json) throws IOException {
        return post(path, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code declaredLength} overrides Content-Length (the body sent is still {@code body}); -1 = chunked. */
    public Response send(String method, String path, String contentType, byte[] body, Long declaredLength) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(address, 5000);
            socket.setSoTimeout(20_000);
            StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
            if (contentType != null) {
                head.append("Content-Type: ").append(contentType).append("\r\n");
            }
            boolean chunked = declaredLength != null && declaredLength == -1;
            if (chunked) {
                head.append("Transfer-Encoding: chunked\r\n");
            } else if (declaredLength != null) {
                head.append("Content-Length: ").append(declaredLength).append("\r\n");
            } else if (body != null) {
                head.append("Content-Length: ").append(body.length).append("\r\n");
            }
            head.append("\r\n");
            OutputStream out = socket.getOutputStream();
            out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
            try {
                if (body != null && chunked) {
                    for (int i = 0; i < body.length; i += 4096) {
                        int n = Math.min(4096, body.length - i);
                        out.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                        out.write(body, i, n);
                        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    }
                    out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                } else if (body != null) {
                    out.write(body);
                }
                out.flush();
            } catch (IOException e) {
                // the server may answer and close before the whole body is sent (early refusal)
            }
            return read(socket.getInputStream());
        }
    }

    private static Response read(InputStream in) throws IOException {
        String statusLine = line(in);
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        if (status == 100) {
            line(in);
            return read(in);
        }
        Map<String, String> headers = new LinkedHashMap<>();
        for (String l = line(in); !l.isEmpty(); l = line(in)) {
            int colon = l.indexOf(':');
            headers.put(l.substring(0, colon).strip().toLowerCase(Locale.ROOT), l.substring(colon + 1).strip());
        }
        int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
        byte[] body = in.readNBytes(length);
        return new Response(status, headers, body);
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') {
                b.write(c);
            }
        }
        if (c == -1 && b.size() == 0) {
            throw new IOException("connection closed before a response line");
        }
        return b.toString(StandardCharsets.US_ASCII);
    }
}
