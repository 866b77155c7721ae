package orbitkv.server.runtime;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.function.Supplier;
import orbitkv.membership.MembershipEvent.FenceCause;
import orbitkv.membership.RegistrationResult;
import orbitkv.membership.RetryBackoff;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.incarnation.HealReport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Heals a fenced incarnation (issue 17 item 5): after a fence of the running incarnation it runs heal
 * attempts on its own thread, paced by {@link ManagerConfig.Heal#backoff()} (doubling, jittered, capped),
 * at most {@code --heal-attempts-max} per fence (0: no limit), until one registers a new incarnation.
 *
 * <p>States ({@link State}, one transition method): {@code SERVING} → {@code HEALING} on a fence that a heal
 * can cure (the lease deadline passed, the lease was lost, the own member record was tampered with by something
 * that is not a registration: issue 33); {@code HEALING} → {@code SERVING} once a new
 * incarnation runs; {@code HEALING} → {@code STOPPED} when the attempts are exhausted or a refusal is
 * permanent (another process took the node id, the cluster was reformatted or cut over); {@code SERVING} →
 * {@code STOPPED} on a fence no heal may cure (replaced by a newer incarnation of this node id: another
 * process registered it; or self-healing disabled). STOPPED is final: the process stays fenced and keeps
 * serving its local cache until restarted. Shutdown ends every state ({@link #close()}).
 *
 * <p>Observable (DIAG-1): {@link #report()} feeds {@code membership.heal} in the status and the
 * {@code orbitkv_membership_heal*} metrics; the incarnation history is bounded ({@link HealReport#HISTORY_MAX}).
 */
final class IncarnationHealer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(IncarnationHealer.class);

    /** The healer's states. */
    enum State {
        SERVING,
        HEALING,
        STOPPED;

        boolean canMoveTo(State next) {
            return switch (this) {
                case SERVING -> next == HEALING || next == STOPPED;
                case HEALING -> next == SERVING || next == STOPPED;
                case STOPPED -> false;
            };
        }
    }

    private final ManagerConfig.Heal settings;
    private final Supplier<RegistrationResult> attempt;
    private final Deque<HealReport.Past> history = new ArrayDeque<>();
    private final Thread thread;
    // guarded by this
    private State state = State.SERVING;
    private long attempts;
    private long attemptsThisFence;
    private long heals;
    private String lastError;
    private boolean closed;

    /**
     * @param attempt one heal attempt: a registration of a new incarnation and, on success, the switch to it
     */
    IncarnationHealer(ManagerConfig.Heal settings, Supplier<RegistrationResult> attempt) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.attempt = Objects.requireNonNull(attempt, "attempt");
        this.thread = Thread.ofPlatform().name("orbitkv-heal").daemon(true).unstarted(this::run);
    }

    /** The incarnation {@code incarnation} now serves (at start and after each heal). */
    synchronized void serving(String incarnation) {
        if (state == State.HEALING) {
            to(State.SERVING);
            heals++;
        }
        remember(new HealReport.Past(incarnation, null));
        if (!thread.isAlive() && settings.enabled() && !closed) {
            thread.start();
        }
    }

    /**
     * The running incarnation {@code incarnation} was fenced ({@code cause}). Called on a membership thread:
     * never blocks; the attempts run on the healer's own thread.
     */
    synchronized void fenced(String incarnation, FenceCause cause) {
        if (closed || cause == FenceCause.SHUTDOWN || state != State.SERVING) {
            return;
        }
        HealReport.Past last = history.peekLast();
        if (last != null && last.incarnation().equals(incarnation) && last.fencedCause() == null) {
            history.pollLast();
        }
        remember(new HealReport.Past(incarnation, cause.name()));
        if (!settings.enabled()) {
            lastError = "self-healing is disabled (--self-heal-disabled): restart the Manager to heal";
            to(State.STOPPED);
        } else if (cause == FenceCause.REPLACED_BY_NEWER_INCARNATION) {
            lastError = "another process registered node id of " + incarnation + ": not healing (it would fence that process)";
            to(State.STOPPED);
        } else {
            attemptsThisFence = 0;
            to(State.HEALING);
            notifyAll();
        }
        LOG.warn("incarnation {} fenced ({}): {}", incarnation, cause,
                state == State.HEALING ? "healing with a new incarnation, local cache service continues" : lastError);
    }

    /** What status and metrics show. */
    synchronized HealReport report() {
        return new HealReport(settings.enabled(), state.name().toLowerCase(java.util.Locale.ROOT), attempts, heals,
                lastError, java.util.List.copyOf(history));
    }

    State state() {
        synchronized (this) {
            return state;
        }
    }

    private void run() {
        RetryBackoff.Sequence backoff = settings.backoff().sequence();
        while (true) {
            synchronized (this) {
                while (!closed && state != State.HEALING) {
                    backoff.reset();
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (closed) {
                    return;
                }
            }
            try {
                Thread.sleep(backoff.nextDelayMs()); // the pacing of heal attempts (not synchronization)
            } catch (InterruptedException e) {
                return;
            }
            synchronized (this) {
                if (closed || state != State.HEALING) {
                    continue;
                }
                attempts++;
                attemptsThisFence++;
            }
            RegistrationResult r;
            try {
                r = attempt.get();
            } catch (RuntimeException e) {
                r = new RegistrationResult.Unavailable("heal attempt failed: " + e);
                LOG.warn("heal attempt failed", e);
            }
            outcome(r);
        }
    }

    private synchronized void outcome(RegistrationResult r) {
        if (r instanceof RegistrationResult.Registered || closed || state != State.HEALING) {
            return; // serving() already moved the state (or a shutdown ended healing)
        }
        lastError = switch (r) {
            case RegistrationResult.Unavailable u -> u.cause();
            case RegistrationResult.TlsRefused t -> t.message();
            case RegistrationResult.Contended c -> c.detail();
            case RegistrationResult.Superseded s -> s.message();
            case RegistrationResult.Unformatted u -> u.message();
            case RegistrationResult.FormatMismatch f -> f.message();
            case RegistrationResult.ClusterMismatch c -> c.message();
            case RegistrationResult.Registered reg -> null;
        };
        // A TLS refusal is retried: certificates may be rotated while the process stays fenced.
        boolean permanent = !(r instanceof RegistrationResult.Unavailable || r instanceof RegistrationResult.Contended
                || r instanceof RegistrationResult.TlsRefused);
        boolean exhausted = settings.attemptsMax() > 0 && attemptsThisFence >= settings.attemptsMax();
        if (permanent || exhausted) {
            to(State.STOPPED);
            LOG.error("healing stopped after {} attempts: {}; this Manager stays fenced (local cache service continues) "
                    + "until restarted", attemptsThisFence, lastError);
        } else {
            LOG.info("heal attempt {} did not register: {}; retrying with backoff", attemptsThisFence, lastError);
        }
    }

    private void to(State next) {
        if (!state.canMoveTo(next)) {
            throw new IllegalStateException("heal state " + state + " cannot move to " + next);
        }
        state = next;
    }

    private void remember(HealReport.Past p) {
        history.addLast(p);
        while (history.size() > HealReport.HISTORY_MAX) {
            history.pollFirst();
        }
    }

    /** Stops healing (shutdown); a running attempt finishes its switch or is undone by the caller. */
    @Override
    public void close() throws InterruptedException {
        synchronized (this) {
            closed = true;
            notifyAll();
        }
        thread.interrupt();
        if (thread.isAlive()) {
            thread.join(30_000);
        }
    }
}
