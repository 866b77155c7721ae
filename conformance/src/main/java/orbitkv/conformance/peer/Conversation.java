package orbitkv.conformance.peer;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One side of a raw v4 stream held by the adversarial peer: send any bytes, receive the other side's frames
 * in order. Received frames are held in a bounded queue (4,096); overflow is an explicit failure.
 *
 * @param <R> the message type the other side sends
 */
public class Conversation<R extends MessageLite> {
    /** Received item: a frame, or the end of the stream (with its gRPC status text). */
    public sealed interface Received<R> {
        record Frame<R>(R frame, int encodedBytes) implements Received<R> {}

        record End<R>(String status) implements Received<R> {}
    }

    private final BlockingQueue<Received<R>> inbox = new ArrayBlockingQueue<>(4096);
    private final Function<byte[], R> parser;
    private volatile StreamObserver<byte[]> out;
    private volatile boolean ended;

    Conversation(Function<byte[], R> parser) {
        this.parser = parser;
    }

    void bind(StreamObserver<byte[]> out) {
        this.out = out;
    }

    StreamObserver<byte[]> inbound() {
        return new StreamObserver<>() {
            @Override
            public void onNext(byte[] value) {
                offer(new Received.Frame<>(parser.apply(value), value.length));
            }

            @Override
            public void onError(Throwable t) {
                ended = true;
                offer(new Received.End<>(String.valueOf(t)));
            }

            @Override
            public void onCompleted() {
                ended = true;
                offer(new Received.End<>("OK"));
            }
        };
    }

    private void offer(Received<R> r) {
        if (!inbox.offer(r)) {
            throw new IllegalStateException("adversarial peer inbox full (4096 frames unread)");
        }
    }

    /** Sends a message. */
    public synchronized void send(MessageLite m) {
        out.onNext(m.toByteArray());
    }

    /** Sends arbitrary bytes as one gRPC message. */
    public synchronized void sendBytes(byte[] bytes) {
        out.onNext(bytes);
    }

    /** Half-closes this side. */
    public synchronized void complete() {
        try {
            out.onCompleted();
        } catch (RuntimeException e) {
            // already closed
        }
    }

    /** The next received item, or null if none arrived within {@code timeout}. */
    public Received<R> next(Duration timeout) throws InterruptedException {
        return inbox.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** The next received frame (skipping nothing); fails if the stream ended or nothing came. */
    public R nextFrame(Duration timeout) throws InterruptedException {
        Received<R> r = next(timeout);
        if (r instanceof Received.Frame<R> f) {
            return f.frame();
        }
        throw new AssertionError("expected a frame within " + timeout + ", got " + r);
    }

    /** True once the other side ended the stream. */
    public boolean ended() {
        return ended;
    }

    static <T> Function<byte[], T> parsing(ParserFn<T> p) {
        return bytes -> {
            try {
                return p.parse(bytes);
            } catch (InvalidProtocolBufferException e) {
                throw new IllegalStateException("the implementation under test sent an unparseable frame", e);
            }
        };
    }

    interface ParserFn<T> {
        T parse(byte[] b) throws InvalidProtocolBufferException;
    }
}
