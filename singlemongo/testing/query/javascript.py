"""Server-side JavaScript as MongoDB runs it: ``$where`` and ``mapReduce``'s functions, on
QuickJS (the ``quickjs`` package, in the ``testing-js`` extra; without it, these answer with
an error that says what to install).

Documents cross into JavaScript as Extended JSON and are revived there: a date is a ``Date``,
an ObjectId an object with ``str`` whose ``toString()`` is ``ObjectId("...")``; numbers come
back as doubles, as JavaScript has no other. Each call
has a time and a memory limit, so a script that loops forever is an error, not a hung
server. The shell helpers servers offer (``Array.sum``, ``Array.avg``, ``tojson``, and
``sleep(ms)``, which PyMongo's tests use to delay a query) exist; a script's sleeping counts
against its time limit.
"""
from bson import json_util
from bson.code import Code

from singlemongo.testing.query import waits
from singlemongo.testing.query.codes import CommandError

TIME_LIMIT_S = 5
MEMORY_LIMIT = 64 << 20
HINT = "the simulated server runs JavaScript with quickjs: pip install singlemongo[testing-js]"
_OPTIONS = json_util.JSONOptions(json_mode=json_util.JSONMode.CANONICAL, tz_aware=False)
PRELUDE = r"""
function ObjectId(hex) { this.str = hex; }
ObjectId.prototype.toString = function () { return 'ObjectId("' + this.str + '")'; };
ObjectId.prototype.equals = function (other) { return other && other.str === this.str; };
ObjectId.prototype.toJSON = function () { return {$oid: this.str}; };
Array.sum = function (a) { return a.reduce(function (s, v) { return s + v; }, 0); };
Array.avg = function (a) { return a.length ? Array.sum(a) / a.length : null; };
function tojson(v) { return JSON.stringify(v); }
var __slept = 0;
function sleep(ms) { __slept += Number(ms) || 0; }
function __revive(key, value) {
  if (value && typeof value === 'object') {
    if ('$date' in value) {
      var d = value.$date;
      return new Date(typeof d === 'object' ? Number(d.$numberLong) : d);
    }
    if ('$oid' in value) return new ObjectId(value.$oid);
    if ('$numberInt' in value) return Number(value.$numberInt);
    if ('$numberLong' in value) return Number(value.$numberLong);
    if ('$numberDouble' in value) return Number(value.$numberDouble);
  }
  return value;
}
function __replace(key, value) {
  var raw = this[key];
  if (raw instanceof Date) return {$date: {$numberLong: String(raw.getTime())}};
  if (typeof raw === 'number') return {$numberDouble: String(raw)};  // a JS number is a double
  return value;
}
function __function(src) {
  if (/^\s*function\b/.test(src)) return eval('(' + src + ')');
  try { return new Function('obj', 'return (' + src + ');'); }  // an expression
  catch (e) { if (!(e instanceof SyntaxError)) throw e; }
  return new Function('obj', src);  // a function body
}
function __where(src, doc) {
  var d = JSON.parse(doc, __revive);
  return !!__function(src).call(d, d);
}
function __mapReduce(map, reduce, finalize, docs, scope) {
  var s = JSON.parse(scope, __revive);
  for (var name in s) globalThis[name] = s[name];
  var groups = {}, order = [];
  globalThis.emit = function (k, v) {
    var key = JSON.stringify(k, __replace);
    if (!(key in groups)) { groups[key] = {key: k, values: []}; order.push(key); }
    groups[key].values.push(v);
  };
  var m = __function(map), r = __function(reduce), f = finalize ? __function(finalize) : null;
  JSON.parse(docs, __revive).forEach(function (d) { m.call(d); });
  var out = order.map(function (key) {
    var g = groups[key];
    var value = g.values.length > 1 ? r(g.key, g.values) : g.values[0];
    return {_id: g.key, value: f ? f(g.key, value) : value};
  });
  return JSON.stringify(out, __replace);
}
"""


def _context():
    try:
        import quickjs  # type: ignore[import-untyped]  # no stubs are published
    except ImportError:
        raise CommandError(2, f"server-side JavaScript is not available: {HINT}") from None
    context = quickjs.Context()
    context.set_time_limit(TIME_LIMIT_S)
    context.set_memory_limit(MEMORY_LIMIT)
    context.eval(PRELUDE)
    return context, quickjs.JSException


def _slept(context):
    """The shell's ``sleep(ms)``: the prelude's ``sleep`` adds up what a script asked for (a
    Python callable cannot run under QuickJS's time limit), and the reply then waits that
    long (``waits``: without holding the store or the server's thread); a script that slept
    past TIME_LIMIT_S fails at once."""
    asked = float(context.get("__slept") or 0) / 1000
    if asked > TIME_LIMIT_S:
        raise CommandError(139, "$where failed: interrupted: the script slept past its time "
                                "limit")
    waits.add(asked)


def _source(code, what):
    text = str(code) if code is not None else None
    if not isinstance(text, str) or not text.strip():
        raise CommandError(2, f"{what} must be JavaScript code (a string or Code), "
                              f"not {code!r}")
    return text


def _dumps(value):
    return json_util.dumps(value, json_options=_OPTIONS)


def where(source, documents):
    """The documents ``$where``'s JavaScript (expression, body or function) keeps."""
    if isinstance(source, Code) and source.scope is not None:
        raise CommandError(2, "$where no longer supports deprecated BSON type CodeWScope")
    source = _source(source, "$where")
    context, failure = _context()
    check = context.get("__where")
    try:
        kept = [doc for doc in documents if check(source, _dumps(doc))]
    except failure as exc:
        raise CommandError(139, f"$where failed: {exc}".splitlines()[0]) from None
    _slept(context)
    return kept


def map_reduce(map_source, reduce_source, finalize_source, documents, scope):
    """``[{_id, value}]`` in the order keys were first emitted."""
    context, failure = _context()
    run = context.get("__mapReduce")
    try:
        out = run(_source(map_source, "map"), _source(reduce_source, "reduce"),
                  _source(finalize_source, "finalize") if finalize_source else None,
                  _dumps(documents), _dumps(scope or {}))
    except failure as exc:
        raise CommandError(139, f"mapReduce failed: {exc}".splitlines()[0]) from None
    return json_util.loads(out, json_options=_OPTIONS) if out else []

