package orbitkv.server.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import orbitkv.recovery.AdmissionOutcome;

/**
 * The answer of one admission call (issue 39, {@code POST /admission/*}): exactly the fields that apply to its outcome
 * ({@code registered}, {@code granted}, {@code returned}, {@code refused} with the refusal's wire name).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AdmissionAnswer(String outcome, Long submitter, Long lease, Long bytes, String lane, Long expiresInMs,
                              Long outstanding, String refusal, String detail) {
    /** The answer of an outcome; {@code now} turns a grant's expiry into milliseconds from now. */
    public static AdmissionAnswer of(AdmissionOutcome o, long now) {
        return switch (o) {
            case AdmissionOutcome.Registered r -> new AdmissionAnswer("registered", r.submitter(), null, null, null, null,
                    null, null, null);
            case AdmissionOutcome.Granted g -> new AdmissionAnswer("granted", null, g.lease(), g.bytes(), g.lane().toString(),
                    Math.max(0, (g.expiresAtNanos() - now) / 1_000_000), null, null, null);
            case AdmissionOutcome.Returned r -> new AdmissionAnswer("returned", null, r.lease(), r.bytes(), null, null,
                    r.outstanding(), null, null);
            case AdmissionOutcome.Refused r -> new AdmissionAnswer("refused", null, null, null, null, null, null,
                    r.reason().wireName(), r.detail());
            case AdmissionOutcome.Queued q -> throw new IllegalStateException("a queued answer is never returned");
        };
    }
}

