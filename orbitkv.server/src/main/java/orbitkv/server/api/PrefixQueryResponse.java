package orbitkv.server.api;

import java.util.List;

/**
 * The lean answer of {@code POST /cache/query} with {@code "detail": "prefix"} (issue 35, G5): what a scheduler's
 * prefix lookup needs and nothing else. {@code coverage}, {@code view_generation}, {@code recoverable_prefix} and
 * {@code prefix_stop} are exactly those of the full answer (the same lookup and the same plan); {@code present[i]}
 * says whether key {@code i} has usable evidence: a local residence or a fresh (not stale) replica that the full
 * answer would list.
 */
public record PrefixQueryResponse(String coverage, long viewGeneration, int recoverablePrefix, String prefixStop,
                           List<Boolean> present) {}
