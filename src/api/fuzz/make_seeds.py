# Writes the seed corpora of src/api/fuzz/corpus: valid examples of each route and the bad-input
# catalogue of docs/reliability.md, each a small file.
import json, os, sys
root = sys.argv[1]
def put(target, name, data):
    d = os.path.join(root, target); os.makedirs(d, exist_ok=True)
    if isinstance(data, str): data = data.encode('utf-8', 'surrogatepass')
    open(os.path.join(d, name), 'wb').write(data)

# Bad input that applies to every JSON route.
common_bad = {
  'not_json': b'hello',
  'truncated': b'{"inputs":"a"',
  'trailing_garbage': b'{"inputs":"a"} x',
  'invalid_utf8': b'{"inputs":"\xff"}',
  'lone_surrogate': b'{"inputs":"\\ud800"}',
  'overlong_utf8': b'{"inputs":"\xc0\xaf"}',
  'empty_body': b'',
  'deep_nesting': b'[' * 40 + b']' * 40,
  'huge_number': b'{"inputs":"a","parameters":{"top_k":1e999999}}',
  'control_nul_emoji_rtl': b'{"inputs":"a\\u0000b \\u200f\\ud83d\\udc68\\u200d\\ud83d\\udc69 \\t\\u0001"}',
  'whitespace_only': b'{"inputs":"   "}',
  'wrong_type': b'{"inputs":5}',
  'empty_list': b'{"inputs":[]}',
  'empty_string': b'{"inputs":""}',
  'too_many': json.dumps({'inputs': ['a'] * 9}).encode(),
  'too_many_tokens': json.dumps({'inputs': ' ' * 100}).encode(),
  'too_many_tokens_truncated': json.dumps({'inputs': ' ' * 100, 'truncate': True}).encode(),
}
routes = {
 'sagemaker_invocations_fuzz': {
   'text': {'inputs': 'I love this'},
   'text_list': {'inputs': ['a b', 'c']},
   'pair': {'inputs': {'text': 'p', 'text_pair': 'h'}},
   'pair_list': {'inputs': [{'text': 'p', 'text_pair': 'h'}, {'text': 'q'}]},
   'params': {'inputs': 'a b', 'parameters': {'top_k': None, 'function_to_apply': 'none', 'truncation': 'only_first', 'max_length': 8, 'batch_size': 2}},
   'top_k': {'inputs': ['a', 'b'], 'parameters': {'top_k': 2}},
   'zero_shot': {'inputs': 'the game', 'parameters': {'candidate_labels': 'sports, cooking', 'hypothesis_template': 'This is {}.', 'multi_label': True}},
   'zero_shot_list': {'inputs': ['x', 'y z'], 'parameters': {'candidate_labels': ['a', 'b', 'c']}},
   'zero_shot_no_slot': {'inputs': 'a', 'parameters': {'candidate_labels': ['x'], 'hypothesis_template': 'no slot'}},
   'bare_body': ['a', 'b'],
   'bad_function': {'inputs': 'a', 'parameters': {'function_to_apply': 'max'}},
   'ner_stride': {'inputs': 'w ' * 40, 'parameters': {'aggregation_strategy': 'simple', 'stride': 2, 'max_length': 8}},
   'ner_list_max': {'inputs': ['Ann in Paris', 'b'], 'parameters': {'aggregation_strategy': 'max', 'ignore_labels': ['O', 'B-PER']}},
   'huge_max_length': '{"inputs":"a","parameters":{"max_length":123456789012345678901234567890}}',
   # Long inputs (docs/api.md "Long inputs"): chunked windows, the policy's conflicts and limits.
   'long_input_chunk': {'inputs': 'w ' * 60, 'parameters': {'long_input': 'chunk', 'stride': 3}},
   'long_input_chunk_list': {'inputs': ['w ' * 40, 'b'], 'parameters': {'long_input': 'chunk', 'max_length': 8, 'top_k': None}},
   'long_input_pair': {'inputs': {'text': 'w ' * 50, 'text_pair': 'h h'}, 'parameters': {'long_input': 'chunk', 'stride': 0}},
   'long_input_zero_shot': {'inputs': 'w ' * 50, 'parameters': {'long_input': 'chunk', 'candidate_labels': ['a', 'b'], 'multi_label': True}},
   'long_input_reject': {'inputs': 'w ' * 60, 'parameters': {'long_input': 'reject'}},
   'long_input_and_truncation': {'inputs': 'a', 'parameters': {'long_input': 'chunk', 'truncation': True}},
   'long_input_bad_policy': {'inputs': 'a', 'parameters': {'long_input': 'split'}},
   'long_input_bad_type': {'inputs': 'a', 'parameters': {'long_input': True, 'stride': 1.5}},
   'long_input_stride_too_big': {'inputs': 'w ' * 60, 'parameters': {'long_input': 'chunk', 'stride': 29}},
   'long_input_stride_huge': {'inputs': 'a', 'parameters': {'long_input': 'chunk', 'stride': 10 ** 7}},
   'long_input_too_many_windows': {'inputs': ['w ' * 200] * 4, 'parameters': {'long_input': 'chunk', 'stride': 20}},
   'long_input_ner': {'inputs': 'w ' * 60, 'parameters': {'long_input': 'chunk', 'aggregation_strategy': 'simple'}},
   # Question answering: windows of a long context, every parameter, the no-answer score.
   'qa': {'inputs': {'question': 'who came', 'context': 'Ann came to Paris'}},
   'qa_list_top_k': {'inputs': [{'question': 'a', 'context': 'b c d'}, {'question': 'x', 'context': 'y'}], 'parameters': {'top_k': 3, 'handle_impossible_answer': True}},
   'qa_windows': {'inputs': {'question': 'who', 'context': 'w ' * 80}, 'parameters': {'max_seq_len': 12, 'doc_stride': 3, 'max_answer_len': 2, 'align_to_words': False}},
   'qa_stride_too_big': {'inputs': {'question': 'q q q', 'context': 'w ' * 80}, 'parameters': {'max_seq_len': 10, 'doc_stride': 9}},
   'qa_missing_context': {'inputs': {'question': 'who'}, 'parameters': {'topk': 2, 'max_question_len': 4}},
 },
 'inference_api_fuzz': {
   'text': {'inputs': 'I love this'},
   'pair': {'inputs': {'text': 'p', 'text_pair': 'h'}},
   'list_top_k': {'inputs': ['a', 'b c'], 'parameters': {'top_k': 1}},
   'zero_shot': {'inputs': 'the game', 'parameters': {'candidate_labels': ['sports', 'cooking']}},
   'truncation': {'inputs': 'a ' * 40, 'parameters': {'truncation': True}},
   'long_input_chunk': {'inputs': ['w ' * 60, 'x'], 'parameters': {'long_input': 'chunk', 'stride': 5}},
   'long_input_zero_shot': {'inputs': 'w ' * 50, 'parameters': {'long_input': 'chunk', 'candidate_labels': 'a, b'}},
   'long_input_and_truncation': {'inputs': 'a', 'parameters': {'long_input': 'chunk', 'truncation': 'only_first'}},
   'long_input_bad_stride': {'inputs': 'a', 'parameters': {'long_input': 'chunk', 'stride': -1}},
   'ner_stride': {'inputs': 'w ' * 40, 'parameters': {'aggregation_strategy': 'max', 'stride': 3}},
 },
 'tei_predict_fuzz': {
   'text': {'inputs': 'a b c'}, 'pair': {'inputs': ['p', 'h']},
   'batch': {'inputs': [['a'], ['p', 'h'], 'b']},
   'options': {'inputs': 'x', 'raw_scores': True, 'truncate': True, 'truncation_direction': 'Left'},
   'empty_side': {'inputs': ['p', '']},
   'long_input_chunk': {'inputs': ['w ' * 60, ['p ' * 40, 'h']], 'long_input': 'chunk', 'stride': 2},
   'long_input_raw': {'inputs': 'w ' * 60, 'long_input': 'chunk', 'raw_scores': True},
   'long_input_and_truncate': {'inputs': 'a', 'long_input': 'chunk', 'truncate': True},
   'long_input_reject': {'inputs': 'w ' * 60, 'long_input': 'reject', 'truncate': False},
   'long_input_bad': {'inputs': 'a', 'long_input': 5, 'stride': '2'},
   'long_input_stride_too_big': {'inputs': 'w ' * 60, 'long_input': 'chunk', 'stride': 30},
 },
 'tei_predict_tokens_fuzz': {
   'text': {'inputs': 'Ann Lee lives in Paris'},
   'list_simple': {'inputs': ['a b c', 'München 東京 ##x'], 'aggregation_strategy': 'simple'},
   'params_object': {'inputs': 'x y', 'parameters': {'aggregation_strategy': 'max', 'ignore_labels': []}},
   'stride': {'inputs': 'w ' * 60, 'aggregation_strategy': 'first', 'stride': 4},
   'stride_average': {'inputs': ['a ' * 40, 'b'], 'parameters': {'aggregation_strategy': 'average', 'stride': 0}},
   'stride_none': {'inputs': 'a b', 'stride': 2},
   'stride_too_big': {'inputs': 'w ' * 60, 'aggregation_strategy': 'simple', 'stride': 31},
   'stride_negative': {'inputs': 'a', 'aggregation_strategy': 'simple', 'stride': -1},
   'bad_strategy': {'inputs': 'a', 'aggregation_strategy': 'longest'},
   'bad_ignore': {'inputs': 'a', 'ignore_labels': 'O'},
   'bad_parameters': {'inputs': 'a', 'parameters': [1]},
   'truncate': {'inputs': 'w ' * 60, 'truncate': True, 'truncation_direction': 'left'},
 },
 'tei_rerank_fuzz': {
   'basic': {'query': 'q', 'texts': ['d1', 'd2', 'd3'], 'return_text': True},
   'options': {'query': 'q', 'texts': ['a b'], 'raw_scores': True, 'truncate': True, 'truncation_direction': 'left'},
   'empty_query': {'query': '', 'texts': ['a']}, 'no_documents': {'query': 'q', 'texts': []},
   'missing_query': {'texts': ['a']},
 },
 'cohere_rerank_fuzz': {
   'strings': {'model': 'rerank', 'query': 'q', 'documents': ['d1', 'd2 d3', 'd4'], 'top_n': 2, 'return_documents': True},
   'objects': {'query': 'q', 'documents': [{'text': 'a', 'title': 't'}, {'text': 'b'}], 'rank_fields': ['text'], 'max_chunks_per_doc': 3},
   'v2_options': {'model': 'rerank-v3.5', 'query': 'q', 'documents': ['a'], 'max_tokens_per_doc': 4096, 'priority': 0, 'top_n': 0},
   'long_document': {'query': 'q', 'documents': ['a ' * 600]},
   'empty_query': {'query': '', 'documents': ['a']}, 'no_documents': {'query': 'q', 'documents': []},
   'missing_query': {'documents': ['a']}, 'object_without_text': {'query': 'q', 'documents': [{'title': 't'}]},
   'negative_top_n': {'query': 'q', 'documents': ['a'], 'top_n': -1},
   'bad_model': {'model': '../etc', 'query': 'q', 'documents': ['a']},
   # max_chunks_per_doc: the documents' windows (the query whole in each), best window scores.
   'max_chunks': {'query': 'q r', 'documents': ['w ' * 60, 'b', {'text': 'x ' * 40}], 'max_chunks_per_doc': 2, 'return_documents': True},
   'max_chunks_one': {'query': 'q', 'documents': ['w ' * 60], 'max_chunks_per_doc': 1, 'top_n': 1},
   'max_chunks_query_too_long': {'query': 'q ' * 40, 'documents': ['w ' * 60], 'max_chunks_per_doc': 3},
   'max_chunks_huge': {'query': 'q', 'documents': ['w ' * 60] * 8, 'max_chunks_per_doc': 10 ** 18},
   'max_chunks_bad': {'query': 'q', 'documents': ['a'], 'max_chunks_per_doc': '2'},
 },
 'vllm_classify_fuzz': {
   'text': {'model': 'nli', 'input': 'I love this'}, 'list': {'input': ['a b', 'c', '']},
   'options': {'input': ['x'], 'truncate_prompt_tokens': 4, 'use_activation': False},
   'truncate_all': {'input': 'a ' * 600, 'truncate_prompt_tokens': -1},
   'truncate_too_many': {'input': 'a', 'truncate_prompt_tokens': 100000},
   'deprecated_switches': {'input': 'a', 'activation': True, 'softmax': False},
   'bad_model': {'model': 'nli\u0000', 'input': 'a'},
 },
 'vllm_score_fuzz': {
   'one_to_one': {'model': 'rerank', 'text_1': 'q', 'text_2': 'd'},
   'one_to_n': {'text_1': ['q'], 'text_2': ['a', 'b', '']},
   'n_to_n': {'text_1': ['q1', 'q2'], 'text_2': ['a', 'b'], 'truncate_prompt_tokens': 8, 'use_activation': False},
   'mismatch': {'text_1': ['q1', 'q2'], 'text_2': ['a', 'b', 'c']},
   'empty_lists': {'text_1': [], 'text_2': ['a']},
   'missing_text_2': {'text_1': 'q'},
 },
 'tei_embed_fuzz': {
   'text': {'inputs': 'héllo world'}, 'list': {'inputs': ['a', 'b']},
   'options': {'inputs': 'a', 'normalize': False, 'dimensions': 2, 'truncate': True},
   'bad_dimensions': {'inputs': 'a', 'dimensions': 0},
   'long_input_chunk': {'inputs': ['w ' * 60, 'b'], 'long_input': 'chunk', 'stride': 1, 'normalize': False, 'dimensions': 4},
   'long_input_and_truncate': {'inputs': 'a', 'long_input': 'chunk', 'truncate': True},
   'long_input_bad': {'inputs': 'a', 'long_input': 'Chunk'},
   'long_input_stride_huge': {'inputs': 'w ' * 60, 'long_input': 'chunk', 'stride': 2 ** 64},
 },
 'tei_embed_all_fuzz': {
   'text': {'inputs': 'héllo world'}, 'list': {'inputs': ['a', 'b c']},
   'truncate_left': {'inputs': 'w ' * 60, 'truncate': True, 'truncation_direction': 'Left'},
   'long': {'inputs': 'w ' * 60},
 },
 'tei_embed_sparse_fuzz': {
   'text': {'inputs': 'héllo world'}, 'list': {'inputs': ['a', 'b c']},
   'truncate': {'inputs': 'w ' * 60, 'truncate': True},
   'long': {'inputs': 'w ' * 60},
 },
 'tei_tokenize_fuzz': {
   'text': {'inputs': 'héllo  world 東京 👨‍👩‍👧'}, 'list': {'inputs': ['a b', 'c'], 'add_special_tokens': False},
 },
 'tei_zero_shot_fuzz': {
   'basic': {'inputs': ['the game'], 'candidate_labels': ['sports', 'cooking'], 'hypothesis_template': 'This is {}.', 'multi_label': True},
   'string_labels': {'inputs': 'x', 'candidate_labels': 'a,,b , c'},
   'empty_labels': {'inputs': 'a', 'candidate_labels': []},
   'empty_label': {'inputs': 'a', 'candidate_labels': ['']},
   'long_input_chunk': {'inputs': ['w ' * 50], 'candidate_labels': ['a', 'b'], 'long_input': 'chunk', 'stride': 4},
   'long_input_multi_label': {'inputs': 'w ' * 50, 'candidate_labels': 'a', 'multi_label': True, 'long_input': 'chunk'},
   'long_input_reject': {'inputs': 'w ' * 50, 'candidate_labels': ['a'], 'long_input': 'reject'},
   'long_input_bad_stride': {'inputs': 'a', 'candidate_labels': ['a'], 'long_input': 'chunk', 'stride': None},
 },
 'kserve_infer_fuzz': {
   'text': {'inputs': [{'name': 'text', 'shape': [1], 'datatype': 'BYTES', 'data': ['hi']}]},
   'text_pair': {'id': 'r1', 'inputs': [{'name': 'text', 'shape': [2, 1], 'datatype': 'BYTES', 'data': [['a'], ['b']]},
                                       {'name': 'text_pair', 'shape': [2], 'datatype': 'BYTES', 'data': ['c', 'd']}],
                 'outputs': [{'name': 'logits'}]},
   'tensor': {'inputs': [{'name': 'input_ids', 'shape': [2, 3], 'datatype': 'INT64', 'data': [[1, 5, 2], [1, 2, 0]]},
                        {'name': 'attention_mask', 'shape': [2, 3], 'datatype': 'INT64', 'data': [1, 1, 1, 1, 1, 0]},
                        {'name': 'token_type_ids', 'shape': [2, 3], 'datatype': 'INT32', 'data': [0, 0, 0, 0, 0, 0]}],
              'outputs': [{'name': 'embeddings'}]},
   'ner_entities': {'inputs': [{'name': 'text', 'shape': [2], 'datatype': 'BYTES', 'data': ['Ann in Paris', 'b']}],
                    'parameters': {'aggregation_strategy': 'first'}, 'outputs': [{'name': 'entities'}, {'name': 'logits'}]},
   'ner_ids_offsets': {'inputs': [{'name': 'input_ids', 'shape': [1, 3], 'datatype': 'INT64', 'data': [[1, 5, 2]]}],
                       'outputs': [{'name': 'offset_mapping'}]},
   'ner_stride': {'inputs': [{'name': 'text', 'shape': [1], 'datatype': 'BYTES', 'data': ['a']}], 'parameters': {'stride': 1, 'aggregation_strategy': 'simple'}},
   'shape_mismatch': {'inputs': [{'name': 'text', 'shape': [2], 'datatype': 'BYTES', 'data': ['a']}]},
   'empty_inputs': {'inputs': []},
   'out_of_range': {'inputs': [{'name': 'input_ids', 'shape': [1, 1], 'datatype': 'INT64', 'data': [4294967296]}]},
 },
 'sagemaker_models_fuzz': {
   'load': {'model_name': 'm', 'url': '/opt/ml/models/m'},
   'file_url': {'model_name': 'm2', 'url': 'file:///opt/ml/models/m2/'},
   'taken': {'model_name': 'nli', 'url': '/opt/ml/models/nli'},
   'traversal': {'model_name': 'm', 'url': '/opt/../etc'},
   'remote': {'model_name': 'm', 'url': 's3://bucket/m'},
   'relative': {'model_name': 'm', 'url': 'models/m'},
   'bad_name': {'model_name': '../m', 'url': '/opt/m'},
   'nul_name': {'model_name': 'a\u0000b', 'url': '/opt/m'},
 },
 'openai_embeddings_fuzz': {
   'text': {'input': 'a', 'model': 'embed', 'encoding_format': 'base64'},
   'list': {'input': ['a', 'b'], 'model': 'text-embedding-3-small', 'dimensions': 3},
   'tokens': {'input': [[12, 7, 13]], 'model': 'embed'},
   'flat_tokens': {'input': [12, 7], 'encoding_format': 'float'},
   'bad_model': {'input': 'a', 'model': '../etc'},
   'empty': {'input': [], 'model': 'embed'},
 },
}
for target, seeds in routes.items():
    for name, body in common_bad.items():
        put(target, 'bad_' + name, body)
    for name, body in seeds.items():
        put(target, name, body if isinstance(body, str) else json.dumps(body, ensure_ascii=False))

# The raw HTTP request path.
def req(method, path, body=b'', headers=(('Content-Type', 'application/json'),), extra=b''):
    head = f'{method} {path} HTTP/1.1\r\nHost: x\r\n'.encode()
    for k, v in headers: head += f'{k}: {v}\r\n'.encode()
    if body or method == 'POST': head += f'Content-Length: {len(body)}\r\n'.encode()
    return head + extra + b'\r\n' + body
T = ('X-Amzn-SageMaker-Target-Model', 'nli')
J = ('Content-Type', 'application/json')
http = {
  'ping': req('GET', '/ping', headers=()),
  'health_metrics_pipelined': req('GET', '/health', headers=()) + req('GET', '/metrics', headers=()) + req('GET', '/v2/health/ready', headers=()),
  'invocations': req('POST', '/invocations', b'{"inputs":"a"}', (J, T)),
  'invocations_tar': req('POST', '/invocations', b'{"inputs":"a"}', (J, ('X-Amzn-SageMaker-Target-Model', 'sub/dir/nli.tar.gz'))),
  'traversal_header': req('POST', '/invocations', b'{"inputs":"a"}', (J, ('X-Amzn-SageMaker-Target-Model', 'sub/../../nli.tar.gz'))),
  'kserve_encoded': req('POST', '/v2/models/%2e%2e/infer', b'{}'),
  'kserve_nul': req('POST', '/v2/models/a%00b/infer', b'{}'),
  'kserve_long': req('POST', '/v2/models/' + 'm' * 300 + '/infer', b'{}'),
  'kserve_meta': req('GET', '/v2/models/embed', headers=()) + req('GET', '/v2/models/nli/ready', headers=()) + req('GET', '/v2', headers=()),
  'predict_keepalive': req('POST', '/predict', b'{"inputs":"x"}', (J, T)) * 2,
  'tei_info': req('GET', '/info', headers=(T,)),
  'chunked': b'POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Amzn-SageMaker-Target-Model: embed\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"inp\r\n9\r\nuts":"a"}\r\n0\r\n\r\n',
  'conflict_cl_te': b'POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'body_too_large': b'POST /predict HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n',
  'chunked_too_large': b'POST /invocations HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n' + (b'200\r\n' + b' ' * 512 + b'\r\n') * 5 + b'0\r\n\r\n',
  'header_too_large': b'GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: ' + b'a' * 1100 + b'\r\n\r\n',
  'too_many_headers': b'GET /ping HTTP/1.1\r\nHost: x\r\n' + b''.join(b'X-H%d: v\r\n' % i for i in range(20)) + b'\r\n',
  'garbage': b'GARBAGE\r\n\r\n',
  'wrong_method': req('PUT', '/predict', headers=()),
  'unknown_route': req('GET', '/nope', headers=()),
  'no_content_type': req('POST', '/predict', b'{"inputs":"a"}', (T,)),
  'api_key': req('POST', '/embed', b'{"inputs":"a"}', (J, ('Authorization', 'Bearer fuzz-key'))),
  'api_key_wrong': req('POST', '/predict', b'{"inputs":"a"}', (J, ('Authorization', 'bearer nope'))),
  'expect_continue': req('POST', '/v1/embeddings', b'{"input":"a","model":"embed"}', (J, ('Expect', '100-continue'))),
  'mme': req('POST', '/models', b'{"model_name":"m","url":"/tmp"}') + req('GET', '/models', headers=()) + req('GET', '/models/nli', headers=()) + req('DELETE', '/models/x', headers=()),
  'mme_invoke': req('POST', '/models/nli/invoke', b'{"inputs":"a"}'),
  'inference_api': req('POST', '/?wait_for_model=true', b'{"inputs":"a"}', (J, T)),
  'connection_close': req('GET', '/ping', headers=(('Connection', 'close'),)) + req('GET', '/ping', headers=()),
  'http10': b'GET /ping HTTP/1.0\r\n\r\n',
}
for name, data in http.items():
    put('http_request_fuzz', name, data)
