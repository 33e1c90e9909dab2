"""Legacy geospatial queries, as MongoDB answers them on legacy coordinate pairs: ``$near``
with a ``2d`` index (flat distance), ``$geoWithin`` with ``$box``, ``$center``,
``$centerSphere`` and ``$polygon``, and ``$within``, its deprecated name.

The engine (mongomock-ng) knows GeoJSON and 2dsphere only; these fixes teach it the legacy
forms ("Geospatial Queries": "Legacy Coordinate Pairs") and leave GeoJSON to it.
"""
import math
import numbers

from mongomock_ng import OperationFailure
from mongomock_ng import collection as mm_collection
from mongomock_ng import filtering
from mongomock_ng import geospatial

GEO_INDEXES = ("2d", "2dsphere")
EARTH_RADIUS_M = 6371000.0  # the engine's haversine_distance answers in metres on this sphere
_ENGINE_GEO_WITHIN = filtering._geo_within_op
_ENGINE_PARSE = geospatial.parse_geojson


def legacy_point(value):
    """(x, y) of a legacy coordinate pair ([x, y] or {a: x, b: y}), else None."""
    if isinstance(value, dict):
        if "type" in value:
            return None
        value = list(value.values())
    if isinstance(value, (list, tuple)) and len(value) >= 2 and all(
            isinstance(v, numbers.Number) and not isinstance(v, bool) for v in value[:2]):
        return float(value[0]), float(value[1])
    return None


def parse_geojson(value):
    """A legacy pair is a Point; anything else is the engine's GeoJSON."""
    point = legacy_point(value)
    if point is not None:
        return {"type": "Point", "coordinates": list(point)}
    return _ENGINE_PARSE(value)


def has_geo_index_on(self, field):
    """$near needs a geospatial index on the field: 2d or 2dsphere."""
    return any(key == field and direction in GEO_INDEXES
               for info in self._store.indexes.values() for key, direction in info.get("key", []))


def _point_of(doc_value):
    point = legacy_point(doc_value)
    if point is None and isinstance(doc_value, dict) and doc_value.get("type") == "Point":
        coordinates = doc_value.get("coordinates")
        point = legacy_point(coordinates)
    return point


def _pair(value, shape):
    point = legacy_point(value)
    if point is None:
        raise OperationFailure(f"{shape} takes legacy coordinate pairs, not {value!r}")
    return point


def _in_box(point, corners):
    (x1, y1), (x2, y2) = (_pair(c, "$box") for c in corners)
    return min(x1, x2) <= point[0] <= max(x1, x2) and min(y1, y2) <= point[1] <= max(y1, y2)


def _in_center(point, spec):
    (x, y), radius = _pair(spec[0], "$center"), spec[1]
    return math.hypot(point[0] - x, point[1] - y) <= radius


def _in_center_sphere(point, spec):
    (lng, lat), radians = _pair(spec[0], "$centerSphere"), spec[1]
    metres = geospatial.haversine_distance(point[0], point[1], lng, lat)
    return metres / EARTH_RADIUS_M <= radians + 1e-12


def _in_polygon(point, vertices):
    ring = [_pair(v, "$polygon") for v in vertices]
    if len(ring) < 3:
        raise OperationFailure("Polygon must have at least 3 points")
    return _inside(point, ring)


def _inside(point, ring):
    """Ray casting; a point on an edge is inside (the engine's own crossing test is wrong)."""
    x, y = point
    inside = False
    for (x1, y1), (x2, y2) in zip(ring, ring[1:] + ring[:1]):
        if min(x1, x2) <= x <= max(x1, x2) and min(y1, y2) <= y <= max(y1, y2) and \
                abs((x2 - x1) * (y - y1) - (y2 - y1) * (x - x1)) < 1e-12:
            return True
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


SHAPES = {"$box": _in_box, "$center": _in_center, "$centerSphere": _in_center_sphere,
          "$polygon": _in_polygon}


def geo_within_op(doc_value, spec):
    """$geoWithin (and $within): a legacy shape, or the engine's $geometry."""
    if isinstance(spec, dict) and "$geometry" in spec:
        point = legacy_point(doc_value)
        if point is not None:
            doc_value = {"type": "Point", "coordinates": list(point)}
        return _ENGINE_GEO_WITHIN(doc_value, spec)
    shapes = [key for key in (spec if isinstance(spec, dict) else {}) if key in SHAPES]
    if len(shapes) != 1:
        raise OperationFailure(f"$geoWithin takes $geometry or one of {sorted(SHAPES)}, "
                               f"not {spec!r}")
    point = _point_of(doc_value)
    return point is not None and SHAPES[shapes[0]](point, spec[shapes[0]])


def apply(table):
    """Install the legacy forms into the engine's operator ``table``."""
    table["$geoWithin"] = table["$within"] = geo_within_op
    mm_collection.Collection._has_2dsphere_index_on = has_geo_index_on
    mm_collection.parse_geojson = parse_geojson
