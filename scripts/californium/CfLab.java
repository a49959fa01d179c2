// coaplab's Californium peer: a client and a server built on Eclipse Californium (core,
// Scandium for DTLS, element-connector-tcp-netty for CoAP over TCP), for the interop tests
// (crates/coaplab/tests/it/interop_californium*.rs) and the Kojo oracle
// (scripts/californium/kojo-oracle.py). Built by scripts/californium/install.sh into
// .peers/californium (run as `.peers/californium/cf ARGS…`).
//
//   cf server [--bind H:P] [--tcp] [--tcp-bind H:P] [--dtls-bind H:P -k KEY [-u ID]]
//             [--observe-period-ms MS] [--cc MODE] [--cf KEY=VALUE]…
//   cf get|put|post|delete URI [--payload-file F|-] [--observe --count N] [--timeout-ms MS]
//             [--cc MODE] [-k KEY] [-u ID] [--cf KEY=VALUE]… [-v]
//   cf kojo URI --clients N --exchanges E --workload continuous|random|mixed [--cc MODE]
//             [--seed S] [--start-jitter-s S] [--payload-bytes B] [--out FILE.csv]
//             [--cf KEY=VALUE]…
//
// MODE is one of Californium's CongestionControlMode values (NULL, COCOA, COCOA_STRONG,
// BASIC_RTO, LINUX_RTO, PEAKHOPPER_RTO; NONE is NULL), case-insensitive, or coaplab's
// algorithm name (default, cocoa, cocoa-strong, basic-rto, linux-rto, peakhopper).
//
// The server serves what `coaplab server` serves (/data/N, /echo, /time, /counter observable,
// /.well-known/core from Californium), plus /store (PUT keeps the body, GET returns it) and
// /k (the Kojo oracle's 60-B answer to a 60-B POST).
// It prints `californium server: listening on H:P` on stderr once bound (then `tcp listening
// on` and `dtls listening on` lines for those endpoints). Client exit codes are coaplab's:
// 0 a 2.xx answer, 1 an error answer, 2 bad arguments, 3 no answer in time, 4 a transport or
// handshake failure.

import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.eclipse.californium.core.CoapClient;
import org.eclipse.californium.core.CoapHandler;
import org.eclipse.californium.core.CoapObserveRelation;
import org.eclipse.californium.core.CoapResource;
import org.eclipse.californium.core.CoapResponse;
import org.eclipse.californium.core.CoapServer;
import org.eclipse.californium.core.coap.CoAP;
import org.eclipse.californium.core.coap.CoAP.ResponseCode;
import org.eclipse.californium.core.coap.EmptyMessage;
import org.eclipse.californium.core.coap.MediaTypeRegistry;
import org.eclipse.californium.core.coap.Message;
import org.eclipse.californium.core.coap.MessageObserverAdapter;
import org.eclipse.californium.core.coap.Request;
import org.eclipse.californium.core.coap.Response;
import org.eclipse.californium.core.config.CoapConfig;
import org.eclipse.californium.core.config.CoapConfig.CongestionControlMode;
import org.eclipse.californium.core.network.CoapEndpoint;
import org.eclipse.californium.core.network.Endpoint;
import org.eclipse.californium.core.network.interceptors.MessageInterceptorAdapter;
import org.eclipse.californium.core.server.resources.CoapExchange;
import org.eclipse.californium.core.server.resources.Resource;
import org.eclipse.californium.elements.config.Configuration;
import org.eclipse.californium.elements.config.SystemConfig;
import org.eclipse.californium.elements.config.TcpConfig;
import org.eclipse.californium.elements.config.UdpConfig;
import org.eclipse.californium.elements.tcp.netty.TcpClientConnector;
import org.eclipse.californium.elements.tcp.netty.TcpServerConnector;
import org.eclipse.californium.scandium.DTLSConnector;
import org.eclipse.californium.scandium.config.DtlsConfig;
import org.eclipse.californium.scandium.config.DtlsConnectorConfig;
import org.eclipse.californium.scandium.dtls.pskstore.AdvancedSinglePskStore;

public final class CfLab {
    /** Largest body either side reassembles (coaplab's MAX_UPLOAD_BYTES). */
    static final int MAX_BODY = 1 << 20;

    static PrintStream err = System.err;

    static final class Usage extends Exception {
        Usage(String m) {
            super(m);
        }
    }

    /** The parsed command line: positional arguments and options (repeatable ones as lists). */
    static final class Args {
        final List<String> positional = new ArrayList<>();
        final Map<String, List<String>> opts = new HashMap<>();

        static final java.util.Set<String> FLAGS = java.util.Set.of("--tcp", "--observe", "-v");

        Args(String[] argv, int from) throws Usage {
            for (int i = from; i < argv.length; i++) {
                String a = argv[i];
                if (a.startsWith("-") && a.length() > 1) {
                    if (FLAGS.contains(a)) {
                        opts.computeIfAbsent(a, k -> new ArrayList<>()).add("");
                    } else {
                        if (i + 1 >= argv.length) {
                            throw new Usage(a + " needs a value");
                        }
                        opts.computeIfAbsent(a, k -> new ArrayList<>()).add(argv[++i]);
                    }
                } else {
                    positional.add(a);
                }
            }
        }

        String get(String name, String dflt) {
            List<String> v = opts.get(name);
            return v == null ? dflt : v.get(v.size() - 1);
        }

        String get(String a, String b, String dflt) {
            return get(a, get(b, dflt));
        }

        boolean has(String name) {
            return opts.containsKey(name);
        }

        List<String> all(String name) {
            return opts.getOrDefault(name, List.of());
        }
    }

    public static void main(String[] argv) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel",
                System.getProperty("cf.log", "warn"));
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        int code;
        try {
            if (argv.length == 0) {
                throw new Usage("a command: server, get, put, post, delete, kojo");
            }
            Args args = new Args(argv, 1);
            switch (argv[0]) {
                case "server":
                    server(args);
                    return; // runs until killed
                case "get":
                case "put":
                case "post":
                case "delete":
                    code = request(argv[0], args);
                    break;
                case "kojo":
                    code = Kojo.run(args);
                    break;
                case "modes":
                    for (CongestionControlMode m : CongestionControlMode.values()) {
                        System.out.println(m.name());
                    }
                    code = 0;
                    break;
                default:
                    throw new Usage("unknown command " + argv[0]);
            }
        } catch (Usage u) {
            err.println("cf: " + u.getMessage());
            code = 2;
        } catch (Exception e) {
            err.println("cf: " + e);
            code = 4;
        }
        System.out.flush();
        err.flush();
        // Californium's threads are not all daemons.
        Runtime.getRuntime().halt(code);
    }

    // ---------------------------------------------------------------- configuration

    static CongestionControlMode mode(String s) throws Usage {
        String n = s.trim().toLowerCase(Locale.ROOT).replace('-', '_');
        switch (n) {
            case "none":
            case "null":
            case "default":
                return CongestionControlMode.NULL;
            case "cocoa":
                return CongestionControlMode.COCOA;
            case "cocoa_strong":
                return CongestionControlMode.COCOA_STRONG;
            case "basic_rto":
            case "basicrto":
                return CongestionControlMode.BASIC_RTO;
            case "linux_rto":
            case "linuxrto":
                return CongestionControlMode.LINUX_RTO;
            case "peakhopper":
            case "peakhopper_rto":
                return CongestionControlMode.PEAKHOPPER_RTO;
            default:
                throw new Usage("unknown congestion-control mode " + s);
        }
    }

    static Configuration config(Args a) throws Usage {
        SystemConfig.register();
        CoapConfig.register();
        UdpConfig.register();
        DtlsConfig.register();
        TcpConfig.register();
        Configuration c = Configuration.createStandardWithoutFile();
        c.set(CoapConfig.MAX_RESOURCE_BODY_SIZE, MAX_BODY + 1024);
        c.set(CoapConfig.PREFERRED_BLOCK_SIZE, Integer.parseInt(a.get("--block-size", "1024")));
        c.set(CoapConfig.MAX_MESSAGE_SIZE, Integer.parseInt(a.get("--block-size", "1024")));
        // One request at a time per peer, as coaplab's --nstart 1 (Californium's default too).
        c.set(CoapConfig.NSTART, 1);
        c.set(CoapConfig.CONGESTION_CONTROL_ALGORITHM, mode(a.get("--cc", "NULL")));
        // CoAP over TCP: Californium's default 1152-B messages and BERT blocks.
        c.set(TcpConfig.TCP_CONNECTION_IDLE_TIMEOUT, 60, TimeUnit.SECONDS);
        Properties p = new Properties();
        for (String kv : a.all("--cf")) {
            int eq = kv.indexOf('=');
            if (eq < 0) {
                throw new Usage("--cf wants KEY=VALUE, got " + kv);
            }
            p.setProperty(kv.substring(0, eq), kv.substring(eq + 1));
        }
        if (!p.isEmpty()) {
            c.add(p);
        }
        return c;
    }

    static InetSocketAddress addr(String s) throws Usage {
        int colon = s.lastIndexOf(':');
        if (colon < 0) {
            throw new Usage("address HOST:PORT expected, got " + s);
        }
        return new InetSocketAddress(s.substring(0, colon), Integer.parseInt(s.substring(colon + 1)));
    }

    static String show(InetSocketAddress a) {
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    static DTLSConnector dtls(Configuration c, InetSocketAddress bind, String key, String id,
            boolean client) {
        c.set(DtlsConfig.DTLS_ROLE,
                client ? DtlsConfig.DtlsRole.CLIENT_ONLY : DtlsConfig.DtlsRole.SERVER_ONLY);
        DtlsConnectorConfig dc = DtlsConnectorConfig.builder(c).setAddress(bind)
                .setAdvancedPskStore(new AdvancedSinglePskStore(id,
                        key.getBytes(StandardCharsets.UTF_8)))
                .build();
        return new DTLSConnector(dc);
    }

    /** Logs every message the endpoint sends and receives on stderr (`-v`). */
    static final class Log extends MessageInterceptorAdapter {
        final String who;

        Log(String who) {
            this.who = who;
        }

        static String line(Message m) {
            StringBuilder b = new StringBuilder();
            b.append(m.getType()).append(' ');
            if (m instanceof Request) {
                b.append(((Request) m).getCode());
            } else if (m instanceof Response) {
                b.append(((Response) m).getCode().text);
            } else {
                b.append("empty");
            }
            b.append(" mid=").append(m.getMID());
            if (m.getToken() != null && !m.getToken().isEmpty()) {
                b.append(" token=").append(m.getTokenString());
            }
            if (m.getOptions().hasBlock1()) {
                b.append(" block1=").append(m.getOptions().getBlock1());
            }
            if (m.getOptions().hasBlock2()) {
                b.append(" block2=").append(m.getOptions().getBlock2());
            }
            if (m.getOptions().hasObserve()) {
                b.append(" observe=").append(m.getOptions().getObserve());
            }
            b.append(" payload=").append(m.getPayloadSize());
            return b.toString();
        }

        @Override
        public void sendRequest(Request r) {
            err.println(who + " send " + line(r) + (r.isDuplicate() ? " retransmission" : ""));
        }

        @Override
        public void sendResponse(Response r) {
            err.println(who + " send " + line(r));
        }

        @Override
        public void sendEmptyMessage(EmptyMessage m) {
            err.println(who + " send " + line(m));
        }

        @Override
        public void receiveRequest(Request r) {
            err.println(who + " recv " + line(r));
        }

        @Override
        public void receiveResponse(Response r) {
            err.println(who + " recv " + line(r));
        }

        @Override
        public void receiveEmptyMessage(EmptyMessage m) {
            err.println(who + " recv " + line(m));
        }
    }

    // ---------------------------------------------------------------- server

    /** N bytes, byte i = i mod 256 (coaplab's /data/N). */
    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    /** /data: every child name N (0 ≤ N ≤ 1 MiB) is a resource of N bytes. */
    static final class Data extends CoapResource {
        Data() {
            super("data");
            getAttributes().setTitle("N bytes at /data/N");
        }

        @Override
        public Resource getChild(String name) {
            try {
                int n = Integer.parseInt(name);
                if (n < 0 || n > MAX_BODY) {
                    return null;
                }
                CoapResource r = new CoapResource(name, false) {
                    @Override
                    public void handleGET(CoapExchange ex) {
                        ex.respond(ResponseCode.CONTENT, pattern(n),
                                MediaTypeRegistry.APPLICATION_OCTET_STREAM);
                    }
                };
                r.setParent(this);
                return r;
            } catch (NumberFormatException e) {
                return null;
            }
        }
    }

    /** /echo: the request body back (2.04 for PUT and POST, 2.05 for FETCH, empty 2.05 GET). */
    static final class Echo extends CoapResource {
        Echo() {
            super("echo");
        }

        @Override
        public void handleGET(CoapExchange ex) {
            ex.respond(ResponseCode.CONTENT);
        }

        void echo(CoapExchange ex, ResponseCode code) {
            int cf = ex.getRequestOptions().getContentFormat();
            ex.respond(code, ex.getRequestPayload(),
                    cf < 0 ? MediaTypeRegistry.APPLICATION_OCTET_STREAM : cf);
        }

        @Override
        public void handlePUT(CoapExchange ex) {
            echo(ex, ResponseCode.CHANGED);
        }

        @Override
        public void handlePOST(CoapExchange ex) {
            echo(ex, ResponseCode.CHANGED);
        }

        @Override
        public void handleFETCH(CoapExchange ex) {
            echo(ex, ResponseCode.CONTENT);
        }
    }

    /** /store: PUT or POST keeps the body (2.04), GET returns it (4.04 before any). */
    static final class Store extends CoapResource {
        volatile byte[] body;

        Store() {
            super("store");
        }

        @Override
        public void handleGET(CoapExchange ex) {
            byte[] b = body;
            if (b == null) {
                ex.respond(ResponseCode.NOT_FOUND);
            } else {
                ex.respond(ResponseCode.CONTENT, b, MediaTypeRegistry.APPLICATION_OCTET_STREAM);
            }
        }

        @Override
        public void handlePUT(CoapExchange ex) {
            body = ex.getRequestPayload();
            ex.respond(ResponseCode.CHANGED);
        }

        @Override
        public void handlePOST(CoapExchange ex) {
            handlePUT(ex);
        }
    }

    /**
     * /k: the Kojo study's server side (docs/experiments.md §4.2): a POST is answered 2.04
     * with 53 B of payload and no option, a 60-B CoAP message with a 2-B token.
     */
    static final class Kojo60 extends CoapResource {
        static final byte[] ANSWER = new byte[53];

        Kojo60() {
            super("k");
        }

        @Override
        public void handlePOST(CoapExchange ex) {
            ex.respond(ResponseCode.CHANGED, ANSWER);
        }
    }

    static final class Time extends CoapResource {
        Time() {
            super("time");
            getAttributes().setTitle("Unix time in seconds");
        }

        @Override
        public void handleGET(CoapExchange ex) {
            ex.respond(ResponseCode.CONTENT, Long.toString(System.currentTimeMillis() / 1000),
                    MediaTypeRegistry.TEXT_PLAIN);
        }
    }

    /** /counter: the number of periods since the server started, observable. */
    static final class Counter extends CoapResource {
        final AtomicLong value = new AtomicLong();

        Counter(ScheduledExecutorService timer, long periodMs) {
            super("counter");
            setObservable(true);
            setObserveType(CoAP.Type.NON);
            getAttributes().setObservable();
            // `californium server: observers=N` on stderr whenever the number changes.
            addObserver(new org.eclipse.californium.core.server.resources.ResourceObserverAdapter() {
                @Override
                public void addedObserveRelation(
                        org.eclipse.californium.core.observe.ObserveRelation relation) {
                    err.println("californium server: observers=" + getObserverCount());
                }

                @Override
                public void removedObserveRelation(
                        org.eclipse.californium.core.observe.ObserveRelation relation) {
                    err.println("californium server: observers=" + getObserverCount());
                }
            });
            timer.scheduleAtFixedRate(() -> {
                value.incrementAndGet();
                changed();
            }, periodMs, periodMs, TimeUnit.MILLISECONDS);
        }

        @Override
        public void handleGET(CoapExchange ex) {
            ex.setMaxAge(1);
            ex.respond(ResponseCode.CONTENT, Long.toString(value.get()),
                    MediaTypeRegistry.TEXT_PLAIN);
        }
    }

    static void server(Args a) throws Exception {
        Configuration c = config(a);
        boolean verbose = a.has("-v");
        CoapServer server = new CoapServer(c);
        CoapEndpoint udp = new CoapEndpoint.Builder().setConfiguration(c)
                .setInetSocketAddress(addr(a.get("--bind", "0.0.0.0:5683"))).build();
        server.addEndpoint(udp);
        CoapEndpoint tcp = null;
        if (a.has("--tcp") || a.has("--tcp-bind")) {
            // Bound after UDP so that port 0 can mean "the UDP port" (as coaplab server --tcp).
            tcp = null;
        }
        CoapEndpoint dtlsEp = null;
        if (a.has("--dtls-bind")) {
            String key = a.get("-k", "--psk", null);
            if (key == null) {
                throw new Usage("--dtls-bind needs -k KEY");
            }
            Configuration dc = config(a);
            DTLSConnector conn = dtls(dc, addr(a.get("--dtls-bind", null)), key,
                    a.get("-u", "--psk-identity", "Client_identity"), false);
            dtlsEp = new CoapEndpoint.Builder().setConfiguration(dc).setConnector(conn).build();
            server.addEndpoint(dtlsEp);
        }
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "counter");
            t.setDaemon(true);
            return t;
        });
        server.add(new Data(), new Echo(), new Store(), new Time(), new Kojo60(),
                new Counter(timer, Long.parseLong(a.get("--observe-period-ms", "1000"))));
        if (verbose) {
            udp.addInterceptor(new Log("server"));
        }
        server.start();
        err.println("californium server: listening on " + show(udp.getAddress()));
        if (a.has("--tcp") || a.has("--tcp-bind")) {
            InetSocketAddress ta = a.has("--tcp-bind") ? addr(a.get("--tcp-bind", null))
                    : udp.getAddress();
            tcp = new CoapEndpoint.Builder().setConfiguration(c)
                    .setConnector(new TcpServerConnector(ta, c)).build();
            server.addEndpoint(tcp);
            tcp.start();
            err.println("californium server: tcp listening on " + show(tcp.getAddress()));
        }
        if (dtlsEp != null) {
            err.println("californium server: dtls listening on " + show(dtlsEp.getAddress()));
        }
        err.flush();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop();
            err.println("californium server: stopped");
        }));
        Thread.currentThread().join();
    }

    // ---------------------------------------------------------------- client

    static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        in.transferTo(b);
        return b.toByteArray();
    }

    /** An endpoint for `uri`'s scheme (coap, coaps, coap+tcp), not yet started. */
    static CoapEndpoint clientEndpoint(URI uri, Args a, Configuration c) throws Usage {
        String scheme = uri.getScheme();
        switch (scheme) {
            case "coap":
                return new CoapEndpoint.Builder().setConfiguration(c)
                        .setInetSocketAddress(new InetSocketAddress(0)).build();
            case "coaps": {
                String key = a.get("-k", "--psk", null);
                if (key == null) {
                    throw new Usage("coaps:// needs -k KEY");
                }
                DTLSConnector conn = dtls(c, new InetSocketAddress(0), key,
                        a.get("-u", "--psk-identity", "coaplab"), true);
                return new CoapEndpoint.Builder().setConfiguration(c).setConnector(conn).build();
            }
            case "coap+tcp":
                return new CoapEndpoint.Builder().setConfiguration(c)
                        .setConnector(new TcpClientConnector(c)).build();
            default:
                throw new Usage("unsupported scheme " + scheme);
        }
    }

    static int request(String method, Args a) throws Exception {
        if (a.positional.size() != 1) {
            throw new Usage(method + " needs one URI");
        }
        URI uri = new URI(a.positional.get(0));
        Configuration c = config(a);
        CoapEndpoint ep = clientEndpoint(uri, a, c);
        boolean verbose = a.has("-v");
        AtomicInteger sends = new AtomicInteger();
        AtomicInteger retransmissions = new AtomicInteger();
        ep.addInterceptor(new MessageInterceptorAdapter() {
            @Override
            public void sendRequest(Request r) {
                sends.incrementAndGet();
                if (r.isDuplicate()) {
                    retransmissions.incrementAndGet();
                }
            }
        });
        if (verbose) {
            ep.addInterceptor(new Log("client"));
        }
        ep.start();
        long timeout = Long.parseLong(a.get("--timeout-ms", "60000"));
        CoapClient client = new CoapClient(uri).setEndpoint(ep).setTimeout(timeout);
        long t0 = System.nanoTime();
        try {
            if (a.has("--observe")) {
                return observe(client, Integer.parseInt(a.get("--count", "3")), timeout);
            }
            CoapResponse r;
            switch (method) {
                case "get":
                    r = client.get();
                    break;
                case "delete":
                    r = client.delete();
                    break;
                default: {
                    String file = a.get("--payload-file", a.get("-f", null));
                    byte[] body;
                    if (file == null) {
                        body = a.get("--payload", "").getBytes(StandardCharsets.UTF_8);
                    } else if (file.equals("-")) {
                        body = readAll(System.in);
                    } else {
                        try (InputStream in = new FileInputStream(file)) {
                            body = readAll(in);
                        }
                    }
                    int cf = MediaTypeRegistry.APPLICATION_OCTET_STREAM;
                    r = method.equals("put") ? client.put(body, cf) : client.post(body, cf);
                }
            }
            if (r == null) {
                err.println("cf: no answer within " + timeout + " ms");
                return 3;
            }
            if (verbose) {
                err.printf("cf: %s in %.3f s, sends=%d retransmissions=%d mode=%s%n",
                        r.getCode().text, (System.nanoTime() - t0) / 1e9, sends.get(),
                        retransmissions.get(), c.get(CoapConfig.CONGESTION_CONTROL_ALGORITHM));
            }
            OutputStream out = System.out;
            out.write(r.getPayload());
            out.flush();
            if (!r.isSuccess()) {
                err.println("cf: " + r.getCode().text + " " + r.getCode());
                return 1;
            }
            return 0;
        } catch (org.eclipse.californium.elements.exception.ConnectorException e) {
            err.println("cf: " + e);
            return 4;
        } finally {
            client.shutdown();
            ep.destroy();
        }
    }

    /**
     * Observes until `count` answers (the registration's and notifications), printing each
     * payload on a line of its own (and `observe=N` on stderr), then deregisters with a GET
     * carrying Observe 1 (RFC 7641 §3.6) and waits (at most 5 s) for its answer.
     */
    static int observe(CoapClient client, int count, long timeout) throws Exception {
        CountDownLatch left = new CountDownLatch(count);
        CountDownLatch cancelled = new CountDownLatch(1);
        AtomicInteger failed = new AtomicInteger();
        CoapObserveRelation rel = client.observe(new CoapHandler() {
            @Override
            public void onLoad(CoapResponse r) {
                Integer obs = r.getOptions().getObserve();
                if (left.getCount() == 0) {
                    if (obs == null) {
                        // The answer to the deregistration.
                        cancelled.countDown();
                    }
                    return;
                }
                synchronized (System.out) {
                    System.out.println(r.getResponseText());
                    System.out.flush();
                }
                err.println("observe=" + (obs == null ? "none" : obs.toString()));
                if (!r.isSuccess()) {
                    failed.incrementAndGet();
                }
                left.countDown();
            }

            @Override
            public void onError() {
                failed.incrementAndGet();
                while (left.getCount() > 0) {
                    left.countDown();
                }
                cancelled.countDown();
            }
        });
        if (!left.await(timeout, TimeUnit.MILLISECONDS)) {
            rel.proactiveCancel();
            err.println("cf: observation incomplete within " + timeout + " ms");
            return 3;
        }
        rel.proactiveCancel();
        if (!cancelled.await(5, TimeUnit.SECONDS)) {
            err.println("cf: no answer to the deregistration within 5 s");
        }
        return failed.get() > 0 ? 1 : 0;
    }

    // ---------------------------------------------------------------- the Kojo oracle

    /**
     * The Kojo study's clients (docs/experiments.md §4.2, §6.1, §8c) on Californium: N flows,
     * each doing E exchanges of a CON POST of `--payload-bytes` (51) to URI, answered by
     * `/k` with a 53-B 2.04 (60-B CoAP messages each way with 2-B tokens, `--cf
     * COAP.TOKEN_SIZE_LIMIT=2`). `continuous`: one client (endpoint, congestion-control
     * state) per flow, back to back. `random`: a flow is a series of short-lived clients,
     * each doing k ~ U{1..10} exchanges (at most what is left of E successful ones), without a
     * gap; each short-lived client is a new endpoint, so Californium's congestion-control
     * state starts afresh (and its socket, MIDs and tokens are new: the server's duplicate
     * cache cannot confuse two clients). `mixed`: flows 0 .. ceil(N/2)-1 continuous, the
     * others random (kojo-zigbee-mixed.toml). One warm-up exchange from a throwaway
     * endpoint precedes the flows. Each flow starts after U[0, `--start-jitter-s`] s.
     * Writes one CSV row per exchange: flow, index, the instant of each transmission
     * (`;`-separated, s since the run started), the instant the response arrived (empty when
     * the exchange failed), the instant it ended, and the response code (or `timeout`).
     */
    static final class Kojo {
        static int run(Args a) throws Exception {
            if (a.positional.size() != 1) {
                throw new Usage("kojo needs one URI");
            }
            String uri = a.positional.get(0);
            int flows = Integer.parseInt(a.get("--clients", "10"));
            int exchanges = Integer.parseInt(a.get("--exchanges", "50"));
            String workload = a.get("--workload", "continuous");
            if (!workload.equals("continuous") && !workload.equals("random")
                    && !workload.equals("mixed")) {
                throw new Usage("--workload continuous|random|mixed");
            }
            long seed = Long.parseLong(a.get("--seed", "1"));
            double startJitterS = Double.parseDouble(a.get("--start-jitter-s", "1"));
            int payload = Integer.parseInt(a.get("--payload-bytes", "51"));
            String outFile = a.get("--out", null);
            PrintStream out = outFile == null ? System.out : new PrintStream(outFile);
            out.println("flow,exchange,sends_s,response_s,end_s,code");
            Configuration c = config(a);
            err.println("cf kojo: " + flows + " " + workload + " flows, mode "
                    + c.get(CoapConfig.CONGESTION_CONTROL_ALGORITHM) + ", MAX_RETRANSMIT "
                    + c.get(CoapConfig.MAX_RETRANSMIT) + ", token "
                    + c.get(CoapConfig.TOKEN_SIZE_LIMIT) + " B");
            // Warm-up: one exchange from a throwaway endpoint before the flows start (one 88-B
            // packet each way through the link, before the measured run). The first exchange
            // of a fresh JVM loads the whole send path in 0.2-0.7 s, and every flow whose start
            // jitter ran out meanwhile would send when it ends, at once.
            {
                CoapEndpoint ep = endpoint(c);
                CoapClient cc = new CoapClient(uri).setEndpoint(ep).setTimeout(60_000L);
                try {
                    Request req = Request.newPost();
                    req.setURI(uri);
                    req.setPayload(new byte[payload]);
                    CoapResponse r = cc.advanced(req);
                    err.println("cf kojo: warm-up exchange: "
                            + (r == null ? "no response" : r.getCode().text));
                } finally {
                    cc.shutdown();
                    ep.destroy();
                }
            }
            long origin = System.nanoTime();
            List<Thread> threads = new ArrayList<>();
            AtomicInteger failures = new AtomicInteger();
            for (int i = 0; i < flows; i++) {
                final int id = i;
                // The flows' seeds are consecutive, and java.util.Random's first draw is nearly
                // the same for consecutive seeds (40 flows of seed 2016: 0.619-0.624): seeded
                // with them directly, every flow slept the same start jitter and all sent
                // within a few ms (docs/cross-check.md, issue 33 part 2). SplittableRandom
                // mixes the seed first.
                Random rnd = new Random(new SplittableRandom(seed * 1_000_003L + id).nextLong());
                Thread t = new Thread(() -> {
                    try {
                        // mixed (kojo-zigbee-mixed.toml): the first ceil(N/2) flows
                        // continuous, the others random, as coaplab numbers them.
                        String w = !workload.equals("mixed") ? workload
                                : id < (flows + 1) / 2 ? "continuous" : "random";
                        flow(id, c, uri, exchanges, w, rnd, startJitterS, payload, origin,
                                out, failures);
                    } catch (Exception e) {
                        err.println("flow " + id + ": " + e);
                        failures.incrementAndGet();
                    }
                }, "kojo-" + id);
                threads.add(t);
            }
            for (Thread t : threads) {
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            out.flush();
            err.printf(Locale.ROOT, "cf kojo: done in %.3f s, %d failed exchanges%n",
                    (System.nanoTime() - origin) / 1e9, failures.get());
            return 0;
        }

        static CoapEndpoint endpoint(Configuration c) throws IOException {
            CoapEndpoint ep = new CoapEndpoint.Builder().setConfiguration(c)
                    .setInetSocketAddress(new InetSocketAddress(0)).build();
            ep.start();
            return ep;
        }

        static void flow(int id, Configuration c, String uri, int exchanges, String workload,
                Random rnd, double startJitterS, int payload, long origin, PrintStream out,
                AtomicInteger failures) throws Exception {
            Thread.sleep((long) (rnd.nextDouble() * startJitterS * 1000));
            byte[] body = new byte[payload];
            int done = 0;
            int index = 0;
            while (done < exchanges) {
                int k = workload.equals("random") ? 1 + rnd.nextInt(10) : exchanges;
                CoapEndpoint ep = endpoint(c);
                CoapClient cc = new CoapClient(uri).setEndpoint(ep).setTimeout(3_600_000L);
                try {
                    for (int j = 0; j < k && done < exchanges; j++) {
                        if (exchange(id, index++, cc, uri, body, origin, out)) {
                            done++;
                        } else {
                            failures.incrementAndGet();
                        }
                    }
                } finally {
                    cc.shutdown();
                    ep.destroy();
                }
            }
        }

        /** One exchange; true when it got a 2.xx. */
        static boolean exchange(int id, int index, CoapClient cc, String uri, byte[] body,
                long origin, PrintStream out) throws Exception {
            Request req = Request.newPost();
            req.setURI(uri);
            req.setPayload(body);
            List<Long> sends = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicLong answered = new AtomicLong(-1);
            req.addMessageObserver(new MessageObserverAdapter() {
                @Override
                public void onSent(boolean retransmission) {
                    sends.add(System.nanoTime());
                }

            });
            CoapResponse r = cc.advanced(req);
            long end = System.nanoTime();
            if (r != null) {
                // The instant the connector received the response's datagram (Californium's
                // receive timestamp, on the same System.nanoTime clock): the observers may run
                // after advanced() has returned.
                answered.set(r.advanced().getNanoTimestamp());
            }
            StringBuilder b = new StringBuilder();
            synchronized (sends) {
                for (long t : sends) {
                    if (b.length() > 0) {
                        b.append(';');
                    }
                    b.append(String.format(Locale.ROOT, "%.6f", (t - origin) / 1e9));
                }
            }
            long ans = answered.get();
            synchronized (out) {
                out.printf(Locale.ROOT, "%d,%d,%s,%s,%.6f,%s%n", id, index, b,
                        ans < 0 ? "" : String.format(Locale.ROOT, "%.6f", (ans - origin) / 1e9),
                        (end - origin) / 1e9, r == null ? "timeout" : r.getCode().text);
            }
            return r != null && r.isSuccess();
        }
    }
}
