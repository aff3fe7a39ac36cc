"""TEI's tei.v1 gRPC services with Debian's grpcio, against the server kserve_grpc_test.py runs
(one server for both protocols: --grpc-port serves inference.GRPCInferenceService and tei.v1).

The message classes come from the repository's tei.proto through protoc's Python generator, and
the calls go through grpcio's generic stubs by full method name, as a TEI gRPC client's are.
Answers are checked against the fixtures' golden.json (within 1e-4) and against the REST TEI
routes of the same server.
"""

import importlib
import json
import math
import os
import subprocess
import sys
import time
import urllib.request

import grpc


class TeiChecks:
    def __init__(self, channel, http_port, key, fixtures, proto_dir, work, protoc, check,
                 spans):
        self.channel = channel
        self.http_port = http_port
        self.key = key
        self.auth = (("authorization", "Bearer " + key),)
        self.fixtures = fixtures
        self.check = check
        self.spans = spans  # () -> the spans the OTLP receiver has
        subprocess.run([protoc, "-I", proto_dir, "--python_out", work, "tei.proto"], check=True)
        sys.path.insert(0, work)
        self.pb = importlib.import_module("tei_pb2")

    # --- calls -------------------------------------------------------------------------------
    def md(self, model, auth=True):
        return (self.auth if auth else ()) + ((("x-amzn-sagemaker-target-model", model),)
                                              if model else ())

    def unary(self, service, method, response):
        return self.channel.unary_unary("/tei.v1.%s/%s" % (service, method),
                                        request_serializer=lambda m: m.SerializeToString(),
                                        response_deserializer=response.FromString)

    def stream(self, service, method, response):
        return self.channel.stream_stream("/tei.v1.%s/%s" % (service, method),
                                          request_serializer=lambda m: m.SerializeToString(),
                                          response_deserializer=response.FromString)

    def rest(self, model, path, body):
        request = urllib.request.Request(
            "http://127.0.0.1:%d%s" % (self.http_port, path), json.dumps(body).encode(),
            {"Content-Type": "application/json", "Authorization": "Bearer " + self.key,
             "X-Amzn-SageMaker-Target-Model": model})
        return json.load(urllib.request.urlopen(request))

    @staticmethod
    def status(call):
        try:
            call()
        except grpc.RpcError as e:
            return e.code(), e.details()
        return grpc.StatusCode.OK, ""

    @staticmethod
    def close(got, want, tolerance=1e-4):
        return len(got) == len(want) and all(abs(g - w) <= tolerance for g, w in zip(got, want))

    def golden(self, folder):
        with open(os.path.join(self.fixtures, folder, "golden.json")) as f:
            return json.load(f)

    @staticmethod
    def readable(cases):
        """Cases the tokenizer reads whole, with no empty text (TEI refuses one)."""
        out = []
        for c in cases:
            if "truncation" in c or "fast_input_ids" in c:
                continue
            texts = c["pair"] if "pair" in c else [c.get("text", "")]
            if all(texts):
                out.append(c)
        return out

    # --- the checks --------------------------------------------------------------------------
    def run(self):
        pb, check = self.pb, self.check
        Info = self.unary("Info", "Info", pb.InfoResponse)
        Embed = self.unary("Embed", "Embed", pb.EmbedResponse)
        EmbedAll = self.unary("Embed", "EmbedAll", pb.EmbedAllResponse)
        EmbedSparse = self.unary("Embed", "EmbedSparse", pb.EmbedSparseResponse)
        Predict = self.unary("Predict", "Predict", pb.PredictResponse)
        PredictPair = self.unary("Predict", "PredictPair", pb.PredictResponse)
        Rerank = self.unary("Rerank", "Rerank", pb.RerankResponse)
        Tokenize = self.unary("Tokenize", "Tokenize", pb.EncodeResponse)
        Decode = self.unary("Tokenize", "Decode", pb.DecodeResponse)
        EmbedStream = self.stream("Embed", "EmbedStream", pb.EmbedResponse)
        EmbedRawStream = self.stream("Embed", "EmbedRawStream", pb.EmbedAllResponse)
        PredictStream = self.stream("Predict", "PredictStream", pb.PredictResponse)
        PredictPairStream = self.stream("Predict", "PredictPairStream", pb.PredictResponse)
        TokenizeStream = self.stream("Tokenize", "TokenizeStream", pb.EncodeResponse)
        DecodeStream = self.stream("Tokenize", "DecodeStream", pb.DecodeResponse)
        RerankStream = self.channel.stream_unary(
            "/tei.v1.Rerank/RerankStream", request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=pb.RerankResponse.FromString)

        # Info, for the model the metadata names.
        info = Info(pb.InfoRequest(), metadata=self.md("nli"))
        check(info.model_id == "nli" and info.model_type == pb.MODEL_TYPE_CLASSIFIER and
              info.max_input_length > 0 and info.version != "", "Info: %s" % info)
        check(Info(pb.InfoRequest(), metadata=self.md("embed")).model_type ==
              pb.MODEL_TYPE_EMBEDDING, "Info of the embedder")
        check(Info(pb.InfoRequest(), metadata=self.md("rerank")).model_type ==
              pb.MODEL_TYPE_RERANKER, "Info of the reranker")

        # --- every readable golden case of the embedder, unnormalised and normalised ---------
        embed = self.readable(self.golden("bert-tiny-embed")["cases"])
        embed = [c for c in embed if "text" in c]
        for c in embed:
            got = Embed(pb.EmbedRequest(inputs=c["text"], normalize=False),
                        metadata=self.md("embed"))
            check(self.close(list(got.embeddings), c["embedding"]["mean"]),
                  "Embed %s: unnormalised mean" % c["id"])
            check(got.metadata.compute_tokens == c["num_tokens"],
                  "Embed %s: %d tokens, not %d" % (c["id"], got.metadata.compute_tokens,
                                                   c["num_tokens"]))
            got = Embed(pb.EmbedRequest(inputs=c["text"]), metadata=self.md("embed"))
            check(self.close(list(got.embeddings), c["embedding"]["mean_l2"]),
                  "Embed %s: normalised by default" % c["id"])
        first = embed[0]
        rest_embed = self.rest("embed", "/embed", {"inputs": first["text"], "dimensions": 8})[0]
        got = Embed(pb.EmbedRequest(inputs=first["text"], dimensions=8), metadata=self.md("embed"))
        check(self.close(list(got.embeddings), rest_embed, 1e-6), "Embed dimensions 8 as REST")
        rest_all = self.rest("embed", "/embed_all", {"inputs": first["text"]})[0]
        got = EmbedAll(pb.EmbedAllRequest(inputs=first["text"]), metadata=self.md("embed"))
        check(len(got.token_embeddings) == len(rest_all) and
              all(self.close(list(t.embeddings), r, 1e-6)
                  for t, r in zip(got.token_embeddings, rest_all)), "EmbedAll as /embed_all")

        # --- SPLADE: EmbedSparse as /embed_sparse ---------------------------------------------
        rest_sparse = self.rest("splade", "/embed_sparse", {"inputs": first["text"]})[0]
        got = EmbedSparse(pb.EmbedSparseRequest(inputs=first["text"]), metadata=self.md("splade"))
        check([v.index for v in got.sparse_embeddings] == [v["index"] for v in rest_sparse] and
              self.close([v.value for v in got.sparse_embeddings],
                         [v["value"] for v in rest_sparse], 1e-6), "EmbedSparse as REST")

        # --- every readable golden case of the classifier, texts and pairs --------------------
        nli = self.golden("bert-tiny-nli")
        id2label = nli["id2label"]
        for c in self.readable(nli["cases"]):
            if "pair" in c:
                got = PredictPair(pb.PredictPairRequest(inputs=c["pair"], raw_scores=True),
                                  metadata=self.md("nli"))
            else:
                got = Predict(pb.PredictRequest(inputs=c["text"], raw_scores=True),
                              metadata=self.md("nli"))
            by_label = {p.label: p.score for p in got.predictions}
            want = [c["logits"][int(i)] for i in sorted(id2label, key=int)]
            check(self.close([by_label.get(id2label[i], math.nan)
                              for i in sorted(id2label, key=int)], want),
                  "Predict %s: raw scores %s vs %s" % (c["id"], by_label, want))
            scores = [p.score for p in got.predictions]
            check(scores == sorted(scores, reverse=True), "Predict %s: best first" % c["id"])
        text_case = next(c for c in nli["cases"] if c["id"] == "short_en")
        got = Predict(pb.PredictRequest(inputs=text_case["text"]), metadata=self.md("nli"))
        rest = self.rest("nli", "/predict", {"inputs": text_case["text"]})
        check([p.label for p in got.predictions] == [r["label"] for r in rest] and
              self.close([p.score for p in got.predictions], [r["score"] for r in rest], 1e-6),
              "Predict (softmax) as /predict: %s vs %s" % (got.predictions, rest))

        # --- every readable golden case of the reranker: score = sigmoid(logit) ----------------
        rerank_cases = self.readable(self.golden("bert-tiny-rerank")["cases"])
        for c in rerank_cases:
            query, text = c["pair"]
            got = Rerank(pb.RerankRequest(query=query, texts=[text]), metadata=self.md("rerank"))
            check(len(got.ranks) == 1 and got.ranks[0].index == 0 and
                  self.close([got.ranks[0].score], c["probs"]), "Rerank %s" % c["id"])
            got = Rerank(pb.RerankRequest(query=query, texts=[text], raw_scores=True),
                         metadata=self.md("rerank"))
            check(self.close([got.ranks[0].score], c["logits"]), "Rerank %s raw" % c["id"])
        query = rerank_cases[0]["pair"][0]
        texts = [c["pair"][1] for c in rerank_cases[:6]]
        got = Rerank(pb.RerankRequest(query=query, texts=texts, return_text=True),
                     metadata=self.md("rerank"))
        rest = self.rest("rerank", "/rerank", {"query": query, "texts": texts,
                                               "return_text": True})
        check([(r.index, r.text) for r in got.ranks] == [(r["index"], r["text"]) for r in rest]
              and self.close([r.score for r in got.ranks], [r["score"] for r in rest], 1e-6),
              "Rerank as /rerank")
        streamed = RerankStream(iter([pb.RerankStreamRequest(query=query, text=t,
                                                             return_text=True) for t in texts]),
                                metadata=self.md("rerank"))
        check([(r.index, r.text) for r in streamed.ranks] == [(r.index, r.text) for r in got.ranks]
              and self.close([r.score for r in streamed.ranks], [r.score for r in got.ranks], 1e-6),
              "RerankStream ranks as Rerank")

        # --- Tokenize: ids, texts and UTF-8 byte offsets as /tokenize; Decode as /decode ------
        for text in ["Hello world", "héllo wörld 😀", "東京は雨"]:
            got = Tokenize(pb.EncodeRequest(inputs=text, add_special_tokens=True),
                           metadata=self.md("nli"))
            rest = self.rest("nli", "/tokenize", {"inputs": text})[0]
            mine = [{"id": t.id, "text": t.text, "special": t.special,
                     "start": t.start if t.HasField("start") else None,
                     "stop": t.stop if t.HasField("stop") else None} for t in got.tokens]
            check(mine == rest, "Tokenize %r as /tokenize: %s vs %s" % (text, mine, rest))
            raw = text.encode()
            check(all(raw[t.start:t.stop].decode() == t.text for t in got.tokens if not t.special),
                  "Tokenize %r: offsets are UTF-8 bytes" % text)
            ids = [t.id for t in got.tokens]
            decoded = Decode(pb.DecodeRequest(ids=ids, skip_special_tokens=True),
                             metadata=self.md("nli"))
            want = self.rest("nli", "/decode", {"ids": ids, "skip_special_tokens": True})[0]
            check(decoded.text == want, "Decode %r as /decode: %r" % (want, decoded.text))
        golden_ids = [c for c in self.readable(nli["cases"]) if "text" in c][:8]
        for c in golden_ids:
            got = Tokenize(pb.EncodeRequest(inputs=c["text"], add_special_tokens=True),
                           metadata=self.md("nli"))
            check([t.id for t in got.tokens] == c["input_ids"], "Tokenize %s ids" % c["id"])

        # --- streams: N messages answered in order, each the unary answer --------------------
        texts = [c["text"] for c in embed[:12]]
        unary = [list(Embed(pb.EmbedRequest(inputs=t), metadata=self.md("embed")).embeddings)
                 for t in texts]
        answers = list(EmbedStream(iter(pb.EmbedRequest(inputs=t) for t in texts),
                                   metadata=self.md("embed")))
        check(len(answers) == len(texts) and
              all(self.close(list(a.embeddings), u, 1e-5) for a, u in zip(answers, unary)),
              "EmbedStream: %d answers in order, each the unary one" % len(answers))
        # More messages than a stream keeps pending (64): reading pauses and goes on.
        many = [texts[k % len(texts)] for k in range(150)]
        answers = list(EmbedStream(iter(pb.EmbedRequest(inputs=t) for t in many),
                                   metadata=self.md("embed")))
        check(len(answers) == len(many) and
              all(self.close(list(a.embeddings), unary[k % len(texts)], 1e-5)
                  for k, a in enumerate(answers)),
              "EmbedStream of 150: %d answers in order" % len(answers))
        answers = list(EmbedRawStream(iter(pb.EmbedAllRequest(inputs=t) for t in texts[:3]),
                                      metadata=self.md("embed")))
        check([len(a.token_embeddings) for a in answers] ==
              [len(EmbedAll(pb.EmbedAllRequest(inputs=t), metadata=self.md("embed"))
                   .token_embeddings) for t in texts[:3]], "EmbedRawStream answers in order")
        singles = [c for c in self.readable(nli["cases"]) if "text" in c]
        answers = list(PredictStream(iter(pb.PredictRequest(inputs=c["text"], raw_scores=True)
                                          for c in singles), metadata=self.md("nli")))
        check(len(answers) == len(singles), "PredictStream: %d answers" % len(answers))
        for c, a in zip(singles, answers):
            by_label = {p.label: p.score for p in a.predictions}
            check(self.close([by_label[id2label[i]] for i in sorted(id2label, key=int)],
                             c["logits"]), "PredictStream %s in order" % c["id"])
        pairs = [c for c in self.readable(nli["cases"]) if "pair" in c]
        answers = list(PredictPairStream(iter(pb.PredictPairRequest(inputs=c["pair"],
                                                                    raw_scores=True)
                                              for c in pairs), metadata=self.md("nli")))
        check(len(answers) == len(pairs) and all(
            self.close([{p.label: p.score for p in a.predictions}[id2label[i]]
                        for i in sorted(id2label, key=int)], c["logits"])
            for c, a in zip(pairs, answers)), "PredictPairStream in order")
        answers = list(TokenizeStream(iter(pb.EncodeRequest(inputs=c["text"],
                                                            add_special_tokens=True)
                                           for c in golden_ids), metadata=self.md("nli")))
        check([[t.id for t in a.tokens] for a in answers] == [c["input_ids"] for c in golden_ids],
              "TokenizeStream in order")
        answers = list(DecodeStream(iter(pb.DecodeRequest(ids=c["input_ids"],
                                                          skip_special_tokens=True)
                                         for c in golden_ids), metadata=self.md("nli")))
        check([a.text for a in answers] ==
              [self.rest("nli", "/decode", {"ids": c["input_ids"]})[0] for c in golden_ids],
              "DecodeStream in order")

        # --- 64 concurrent calls, each its own answer ------------------------------------------
        futures = [(c, Embed.future(pb.EmbedRequest(inputs=c["text"], normalize=False),
                                    metadata=self.md("embed")))
                   for c in (embed[k % len(embed)] for k in range(64))]
        for c, future in futures:
            check(self.close(list(future.result(timeout=120).embeddings), c["embedding"]["mean"]),
                  "concurrent Embed %s" % c["id"])

        # --- errors: the status and a message, and the server keeps serving -------------------
        one = pb.EmbedRequest(inputs="hello")
        code, _ = self.status(lambda: Embed(one, metadata=self.md("embed", auth=False)))
        check(code == grpc.StatusCode.UNAUTHENTICATED, "TEI without a key: %s" % code)
        code, _ = self.status(lambda: Embed(one, metadata=self.md("embed", auth=False) + (
            ("authorization", "Bearer wrong"),)))
        check(code == grpc.StatusCode.UNAUTHENTICATED, "TEI with a wrong key: %s" % code)
        code, _ = self.status(lambda: list(EmbedStream(iter([one, one]),
                                                       metadata=self.md("embed", auth=False))))
        check(code == grpc.StatusCode.UNAUTHENTICATED, "a stream without a key: %s" % code)
        code, message = self.status(lambda: Embed(one, metadata=self.md("nope")))
        check(code == grpc.StatusCode.NOT_FOUND and "nope" in message,
              "unknown target model: %s %s" % (code, message))
        code, message = self.status(lambda: Embed(one, metadata=self.auth))
        check(code == grpc.StatusCode.NOT_FOUND, "several models and none chosen: %s" % code)
        code, message = self.status(lambda: Embed(pb.EmbedRequest(inputs=""),
                                                  metadata=self.md("embed")))
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "inputs" in message,
              "an empty input: %s %s" % (code, message))
        code, message = self.status(lambda: Embed(one, metadata=self.md("nli")))
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "tei.v1.Embed/Embed" in message,
              "Embed on a classifier: %s %s" % (code, message))
        code, message = self.status(lambda: PredictPair(
            pb.PredictPairRequest(inputs=["a", "b", "c"]), metadata=self.md("nli")))
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "pair" in message,
              "three texts for a pair: %s %s" % (code, message))
        malformed = self.channel.unary_unary("/tei.v1.Embed/Embed",
                                             request_serializer=lambda b: b,
                                             response_deserializer=pb.EmbedResponse.FromString)
        code, message = self.status(lambda: malformed(b"\x0a\x05ab", metadata=self.md("embed")))
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "EmbedRequest" in message,
              "a message cut short: %s %s" % (code, message))
        code, message = self.status(lambda: malformed(b"\x0a\x02\xc3\x28",
                                                      metadata=self.md("embed")))
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "UTF-8" in message,
              "a string that is not UTF-8: %s %s" % (code, message))
        code, _ = self.status(lambda: Embed(pb.EmbedRequest(inputs="word " * 2000),
                                            metadata=self.md("embed")))
        check(code == grpc.StatusCode.INVALID_ARGUMENT, "an over-long text: %s" % code)
        code, _ = self.status(lambda: Embed(pb.EmbedRequest(inputs="x" * (2 << 20)),
                                            metadata=self.md("embed")))
        check(code == grpc.StatusCode.RESOURCE_EXHAUSTED, "past --payload-limit: %s" % code)
        long_text = next(c for c in nli["cases"] if c["id"] == "long_300")["text"]
        code, _ = self.status(lambda: Rerank(pb.RerankRequest(query="what is it about",
                                                              texts=[long_text] * 32),
                                             metadata=self.md("rerank"), timeout=0.001))
        check(code == grpc.StatusCode.DEADLINE_EXCEEDED, "a deadline that passed: %s" % code)

        # A bad message in a stream: the answers before it, then INVALID_ARGUMENT naming it.
        got = []
        try:
            for answer in EmbedStream(iter([one, one, pb.EmbedRequest(inputs=""), one]),
                                      metadata=self.md("embed")):
                got.append(answer)
            code, message = grpc.StatusCode.OK, ""
        except grpc.RpcError as e:
            code, message = e.code(), e.details()
        check(len(got) == 2 and code == grpc.StatusCode.INVALID_ARGUMENT and "inputs" in message,
              "a stream's bad message: %d answers, %s %s" % (len(got), code, message))
        code, message = self.status(lambda: RerankStream(
            iter(pb.RerankStreamRequest(query="q", text="t") for _ in range(40)),
            metadata=self.md("rerank")))
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "batch size" in message,
              "a RerankStream past --max-client-batch-size: %s %s" % (code, message))
        check(len(Embed(one, metadata=self.md("embed")).embeddings) > 0,
              "still serving after the errors")

        # Admission: many heavy calls at once; those past --max-concurrent-requests are
        # RESOURCE_EXHAUSTED, the rest answered.
        heavy = pb.RerankRequest(query="what is it about", texts=[long_text] * 8)
        flood = [Rerank.future(heavy, metadata=self.md("rerank")) for _ in range(200)]
        refused = answered = 0
        for future in flood:
            try:
                answered += len(future.result(timeout=300).ranks) == 8
            except grpc.RpcError as e:
                refused += check(e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED,
                                 "TEI flood refusal: %s %s" % (e.code(), e.details()))
        check(refused > 0 and answered > 0,
              "TEI flood: %d refused, %d answered" % (refused, answered))

        # --- metrics and the span: grpc:<Method>, named after the tei.v1 service ---------------
        trace_id = "5bf92f3577b34da6a3ce929d0e0e4737"
        Embed(one, metadata=self.md("embed") + (
            ("traceparent", "00-%s-00f067aa0ba902b8-01" % trace_id),))
        span = None
        deadline = time.time() + 10
        while span is None and time.time() < deadline:
            span = next((sp for sp in self.spans() if sp.get("traceId") == trace_id and
                         sp.get("parentSpanId") == "00f067aa0ba902b8"), None)
            time.sleep(0.05)
        if check(span is not None, "no TEI server span is the child of the traceparent"):
            check(span["name"] == "tei.v1.Embed/Embed", "TEI span name %s" % span["name"])
        metrics = urllib.request.urlopen(urllib.request.Request(
            "http://127.0.0.1:%d/metrics" % self.http_port,
            headers={"Authorization": "Bearer " + self.key})).read().decode()
        check('grpc:Embed"' in metrics and 'grpc:PredictStream"' in metrics,
              "the metrics label TEI calls grpc:<Method>")
        return heavy, Rerank
