package orbitkv.membership;

/**
 * Member records seen under {@code members/} and refused, never admitted (issue 20 item 7, MEM-4): only a
 * record attached to a lease (written by a registration) whose key names the record's own node id is a
 * member. Counted per record read (bootstrap page or watch event), so a re-read counts again.
 *
 * @param unleased records written without a lease (a plain put): they would never expire
 * @param keyMismatch records stored under another node's key
 * @param malformed records that are not canonical member records
 */
public record MemberRecordRefusals(long unleased, long keyMismatch, long malformed) {
    public static final MemberRecordRefusals NONE = new MemberRecordRefusals(0, 0, 0);

    public MemberRecordRefusals {
        if (unleased < 0 || keyMismatch < 0 || malformed < 0) {
            throw new IllegalArgumentException("refusal counts must be >= 0");
        }
    }

    public long total() {
        return unleased + keyMismatch + malformed;
    }
}
