package orbitkv.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class ManagerConfigTest {
    @Test
    @DisplayName("DESIGN §9 defaults: every setting with a default parses to the design's initial bound")
    void defaults() {
        ManagerConfig c = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true"));
        assertThat(c.nodeId().value()).isEqualTo(ManagerConfig.STANDALONE_NODE_ID);
        assertThat(c.scope()).isEqualTo(Scope.all());
        assertThat(c.tiers().dramBytes()).isEqualTo(1L << 30);
        // issue 35 item 1: one 256-token chunk of an 8B model in bf16 (32 MiB) and every layout up to ~9B fit
        assertThat(c.tiers().blockBytesMax()).isEqualTo(64L << 20).isLessThanOrEqualTo(ManagerConfig.BLOCK_BYTES_CEILING);
        assertThat(c.transferConfig().blockBytesMax()).isEqualTo(64L << 20);
        assertThat(c.tiers().hasSsd()).isFalse();
        assertThat(c.http().awaitTimeoutMsMax()).isEqualTo(30_000);
        assertThat(c.http().awaitWaitersMax()).isEqualTo(64);
        assertThat(c.inventory()).isEqualTo(new ManagerConfig.Inventory(2, 5, 1024, 512 << 10, 1 << 20, 4 << 20,
                8 << 20, 1024, 512 << 10, 64 << 20, 1_000_000, 10, 1000, 1024, 4, true, java.util.Set.of(), 16));
        assertThat(c.sessionConfig().sessionsPerSourceMax()).isEqualTo(orbitkv.inventory.SessionConfig.DEFAULT_SESSIONS_PER_SOURCE_MAX);
        assertThat(c.index()).isEqualTo(new ManagerConfig.Index(5000, 256L << 20, 128));
        assertThat(c.route()).isEqualTo(new ManagerConfig.Route(8, 128, 32, 2));
        assertThat(c.httpListen()).isEqualTo(new ListenAddress("127.0.0.1", 8090));
        assertThat(c.transferConfig().readsPerConnectionMax())
                .isEqualTo(orbitkv.transfer.TransferConfig.DEFAULT_READS_PER_CONNECTION_MAX);
        ManagerConfig oneAtATime = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")
                .put(Setting.TRANSFER_READS_PER_CONNECTION_MAX, "1"));
        assertThat(oneAtATime.transferConfig().readsPerConnectionMax()).as("the flag reaches the engine").isEqualTo(1);
    }

    @Test
    @DisplayName("IDX-4 repeated --metadata-namespace gives a canonical scope; --metadata-empty-scope gives none")
    void scopes() {
        ManagerConfig c = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")
                .put(Setting.METADATA_NAMESPACE, List.of("b", "a", "b")));
        assertThat(c.scope()).isEqualTo(Scope.of(List.of(Namespace.utf8("a"), Namespace.utf8("b"))));
        ManagerConfig none = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")
                .put(Setting.METADATA_EMPTY_SCOPE, "true"));
        assertThat(none.scope()).isEqualTo(Scope.none());
        List<String> many = java.util.stream.IntStream.range(0, 257).mapToObj(i -> "ns" + i).toList();
        assertThatThrownBy(() -> ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")
                .put(Setting.METADATA_NAMESPACE, many)))
                .hasMessage("--metadata-namespace is given 257 times; a scope holds at most 256 namespaces");
    }

    @Test
    @DisplayName("BND-6 the config file is JSON keyed by option names; flags win; unknown keys and wrong types are refused")
    void configFile() {
        RawValues file = ConfigFile.parse("f.json", """
                {"standalone": true, "dram": "2GiB", "metadata-namespace": ["x", "y"], "dram-pins-max": 9}
                """.getBytes(StandardCharsets.UTF_8));
        ManagerConfig fromFile = ManagerConfig.from(file);
        assertThat(fromFile.tiers().dramBytes()).isEqualTo(2L << 30);
        assertThat(fromFile.tiers().dramPinsMax()).isEqualTo(9);
        ManagerConfig flagsWin = ManagerConfig.from(file.overlay(new RawValues()
                .put(Setting.DRAM, "3GiB").put(Setting.METADATA_NAMESPACE, List.of("z"))));
        assertThat(flagsWin.tiers().dramBytes()).isEqualTo(3L << 30);
        assertThat(flagsWin.scope()).isEqualTo(Scope.of(List.of(Namespace.utf8("z"))));
        assertThatThrownBy(() -> ConfigFile.parse("f.json", "{\"dramm\": \"1GiB\"}".getBytes(StandardCharsets.UTF_8)))
                .hasMessage("--config f.json: unknown setting 'dramm'");
        assertThatThrownBy(() -> ConfigFile.parse("f.json", "{\"standalone\": \"yes\"}".getBytes(StandardCharsets.UTF_8)))
                .hasMessage("--config f.json: 'standalone' must be true or false, got \"yes\"");
        assertThatThrownBy(() -> ConfigFile.parse("f.json", "[1]".getBytes(StandardCharsets.UTF_8)))
                .hasMessage("--config f.json must hold one JSON object");
        assertThatThrownBy(() -> ConfigFile.parse("f.json", "{\"metadata-namespace\": \"a\"}".getBytes(StandardCharsets.UTF_8)))
                .hasMessage("--config f.json: 'metadata-namespace' must be a non-empty array of strings");
    }

    @Test
    @DisplayName("INV-9 BND-1 issue 35 with their defaults, every bound stated against the block size holds one block of the 64 MiB default and of the 128 MiB ceiling (DRAM, SSD queue, pins, save body, restore in flight, transfer windows, HTTP body bytes)")
    void defaultsHoldOneLargestBlockEach() {
        for (String block : List.of("64MiB", "128MiB")) {
            ManagerConfig c = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true").put(Setting.BLOCK_BYTES_MAX, block)
                    .put(Setting.SSD_DIR, "/tmp/orbitkv-unused").put(Setting.SSD, "1GiB"));
            long b = c.tiers().blockBytesMax();
            long record = b + ManagerConfig.RECORD_FRAMING_BYTES_MAX;
            assertThat(b).as(block).isEqualTo(SizeParser.parse(Setting.BLOCK_BYTES_MAX, block));
            assertThat(List.of(c.tiers().dramBytes(), c.tiers().dramPinnedBytesMax(), c.tiers().ssdPinnedBytesMax(),
                    c.tiers().ssdQueueBytesMax(), c.transfer().egressInFlightBytesMax(), c.transfer().receiveInFlightBytesMax(),
                    c.transfer().pinnedBytesPerRequesterMax())).as(block).allSatisfy(bound -> assertThat(bound).isGreaterThanOrEqualTo(b));
            assertThat(List.of(c.http().saveBodyBytesMax(), c.tiers().restoreBytesInFlightMax(), c.http().bodyBytesInFlightMax()))
                    .as(block).allSatisfy(bound -> assertThat(bound).isGreaterThanOrEqualTo(record));
            assertThat(c.transferConfig().blockBytesMax()).isEqualTo(b);
        }
        assertThat(ManagerConfig.BLOCK_BYTES_CEILING).isEqualTo(128L << 20);
    }

    @Test
    @DisplayName("every setting has a doc line, and a default unless it is required or optional by contract")
    void settingTableComplete() {
        for (Setting s : Setting.values()) {
            assertThat(s.doc()).as(s.flag()).isNotBlank();
            boolean noDefaultAllowed = List.of(Setting.CLUSTER, Setting.NODE_ID, Setting.ETCD, Setting.SSD_DIR,
                    Setting.SSD, Setting.METADATA_NAMESPACE, Setting.ETCD_CA_FILE, Setting.ETCD_CERT_FILE,
                    Setting.ETCD_KEY_FILE, Setting.PEER_TLS_CERT_FILE, Setting.PEER_TLS_KEY_FILE, Setting.PEER_TLS_CA_FILE,
                    Setting.HTTP_TOKEN_FILE, Setting.HTTP_READ_TOKEN_FILE, Setting.HTTP_TLS_CERT_FILE,
                    Setting.HTTP_TLS_KEY_FILE, Setting.HTTP_TLS_CLIENT_CA_FILE, Setting.HTTP_UNIX_SOCKET, Setting.TRANSFER_DATA_ADVERTISE, Setting.ROUTE_TRACE_DIR,
                    Setting.SOURCE_PRIORITY_REQUESTERS).contains(s);
            assertThat(s.defaultValue() == null).as(s.flag()).isEqualTo(noDefaultAllowed);
        }
    }

    @Test
    @DisplayName("ROUTE-10 --source-send-steps-max, --source-send-priority-disabled and --source-priority-requesters reach the session server's SessionConfig")
    void sourceSendScheduling() {
        orbitkv.inventory.SessionConfig d = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")).sessionConfig();
        assertThat(d.sendStepsConcurrentMax()).isEqualTo(orbitkv.inventory.SessionConfig.DEFAULT_SEND_STEPS_CONCURRENT_MAX);
        assertThat(d.sendPriority()).isTrue();
        assertThat(d.priorityRequesters()).isEmpty();
        orbitkv.inventory.SessionConfig c = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")
                .put(Setting.SOURCE_SEND_STEPS_MAX, "2").put(Setting.SOURCE_SEND_PRIORITY_DISABLED, "true")
                .put(Setting.SOURCE_PRIORITY_REQUESTERS, "n1, n2")).sessionConfig();
        assertThat(c.sendStepsConcurrentMax()).isEqualTo(2);
        assertThat(c.sendPriority()).isFalse();
        assertThat(c.priorityRequesters()).containsExactlyInAnyOrder(new orbitkv.membership.NodeId("n1"),
                new orbitkv.membership.NodeId("n2"));
    }

    @Test
    @DisplayName("BND-3 --source-sessions-max: default 1024, a given value reaches the session server's sessionsPerSourceMax, out of range is refused naming the option")
    void sourceSessionsMax() {
        ManagerConfig d = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true"));
        assertThat(d.inventory().sourceSessionsMax()).isEqualTo(1024);
        ManagerConfig small = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true").put(Setting.SOURCE_SESSIONS_MAX, "3"));
        assertThat(small.inventory().sourceSessionsMax()).isEqualTo(3);
        assertThat(small.sessionConfig().sessionsPerSourceMax()).isEqualTo(3);
        for (String bad : List.of("0", "-1", "65537")) {
            assertThatThrownBy(() -> ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true").put(Setting.SOURCE_SESSIONS_MAX, bad)))
                    .isInstanceOf(ConfigException.class).hasMessage("--source-sessions-max must be 1..65536, got " + bad);
        }
    }

    @Test
    @DisplayName("BND-1 BND-6 issue 33: the data listener bounds default to 1024 / 64 / 5000 ms / 120000 ms / 64 and given values reach TransferConfig")
    void dataListenerBoundsReachTransferConfig() {
        var d = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")).transferConfig();
        assertThat(List.of(d.dataConnectionsMax(), d.dataConnectionsPerAddressMax(), d.dataReadsQueuedPerConnectionMax()))
                .containsExactly(1024, 64, 64);
        assertThat(List.of(d.dataHeaderTimeoutMs(), d.dataIdleTimeoutMs())).containsExactly(5000L, 120_000L);
        var c = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")
                .put(Setting.TRANSFER_DATA_CONNECTIONS_MAX, "300").put(Setting.TRANSFER_DATA_CONNECTIONS_PER_ADDRESS_MAX, "20")
                .put(Setting.TRANSFER_DATA_HEADER_TIMEOUT_MS, "700").put(Setting.TRANSFER_DATA_IDLE_TIMEOUT_MS, "9000")
                .put(Setting.TRANSFER_DATA_READS_QUEUED_PER_CONNECTION_MAX, "8")).transferConfig();
        assertThat(List.of(c.dataConnectionsMax(), c.dataConnectionsPerAddressMax(), c.dataReadsQueuedPerConnectionMax()))
                .containsExactly(300, 20, 8);
        assertThat(List.of(c.dataHeaderTimeoutMs(), c.dataIdleTimeoutMs())).containsExactly(700L, 9000L);
    }

    @Test
    @DisplayName("issue 33 --transfer-tls-provider: auto by default, jdk and openssl taken, anything else refused naming the option")
    void transferTlsProvider() {
        assertThat(ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")).transfer().tlsProvider())
                .isEqualTo(orbitkv.transfer.TlsProvider.AUTO);
        assertThat(ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true").put(Setting.TRANSFER_TLS_PROVIDER, "jdk"))
                .transfer().tlsProvider()).isEqualTo(orbitkv.transfer.TlsProvider.JDK);
        assertThat(ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true").put(Setting.TRANSFER_TLS_PROVIDER,
                "openssl")).transfer().tlsProvider()).isEqualTo(orbitkv.transfer.TlsProvider.OPENSSL);
        assertThatThrownBy(() -> ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")
                .put(Setting.TRANSFER_TLS_PROVIDER, "boringssl")))
                .hasMessage("--transfer-tls-provider must be auto, jdk or openssl, got 'boringssl'");
    }
}
