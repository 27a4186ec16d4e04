"""Routes as the frameworks serve them: methods from `methods=`, prefixes from blueprints,
routers, mounts and includes — each case a small real project and the route table its
framework would print (method, path) with the handler of each route."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf
from tests._tree import write_tree

FLASKR_INIT = """\
from flask import Flask


def create_app():
    app = Flask(__name__)

    @app.route("/hello")
    def hello():
        return "Hello, World!"

    from . import auth
    from . import blog

    app.register_blueprint(auth.bp)
    app.register_blueprint(blog.bp)
    app.add_url_rule("/", endpoint="index")
    return app
"""
FLASKR_AUTH = """\
from flask import Blueprint

bp = Blueprint("auth", __name__, url_prefix="/auth")


@bp.route("/register", methods=("GET", "POST"))
def register():
    return ""


@bp.route("/login", methods=["GET", "POST"])
def login():
    return ""


@bp.route("/logout")
def logout():
    return ""
"""
FLASKR_BLOG = """\
from flask import Blueprint

bp = Blueprint("blog", __name__)


@bp.route("/")
def index():
    return ""


@bp.route("/<int:id>/delete", methods=("POST",))
def delete(id):
    return ""
"""

CASES = [
    (
        "flask-blueprints",  # the Flask tutorial's shape (flaskr)
        {"flaskr/__init__.py": FLASKR_INIT, "flaskr/auth.py": FLASKR_AUTH,
         "flaskr/blog.py": FLASKR_BLOG},
        {
            ("GET", "/hello", "flaskr/__init__.py::create_app.hello"),
            ("GET", "/auth/register", "flaskr/auth.py::register"),
            ("POST", "/auth/register", "flaskr/auth.py::register"),
            ("GET", "/auth/login", "flaskr/auth.py::login"),
            ("POST", "/auth/login", "flaskr/auth.py::login"),
            ("GET", "/auth/logout", "flaskr/auth.py::logout"),
            ("GET", "/", "flaskr/blog.py::index"),
            ("POST", "/{id}/delete", "flaskr/blog.py::delete"),
        },
    ),
    (
        "flask-prefix-at-registration",  # register_blueprint's url_prefix replaces the own one
        {
            "app.py": "from flask import Flask\nfrom views import api as api_bp\n\n"
            "app = Flask(__name__)\napp.register_blueprint(api_bp, url_prefix='/api/v2')\n",
            "views.py": "from flask import Blueprint\napi = Blueprint('api', __name__, "
            "url_prefix='/v1')\n\n@api.get('/items/<name>')\ndef item(name):\n    return name\n",
        },
        {("GET", "/api/v2/items/{name}", "views.py::item")},
    ),
    (
        "flask-nested-blueprints",
        {
            "app.py": "from flask import Flask, Blueprint\n\napp = Flask(__name__)\n"
            "parent = Blueprint('parent', __name__, url_prefix='/parent')\n"
            "child = Blueprint('child', __name__, url_prefix='/child')\n\n"
            "@child.route('/leaf', methods=['PUT'])\ndef leaf():\n    return ''\n\n"
            "parent.register_blueprint(child)\napp.register_blueprint(parent)\n",
        },
        {("PUT", "/parent/child/leaf", "app.py::leaf")},
    ),
    (
        "fastapi-routers",  # FastAPI's "bigger applications" layout
        {
            "app/main.py": "from fastapi import FastAPI\nfrom .routers import items, users\n"
            "from .internal import admin\n\napp = FastAPI()\napp.include_router(users.router)\n"
            "app.include_router(items.router)\n"
            "app.include_router(admin.router, prefix='/admin', tags=['admin'])\n\n"
            "@app.get('/')\nasync def root():\n    return {}\n",
            "app/routers/users.py": "from fastapi import APIRouter\nrouter = APIRouter()\n\n"
            "@router.get('/users/', tags=['users'])\nasync def read_users():\n    return []\n\n"
            "@router.get('/users/{username}')\nasync def read_user(username: str):\n"
            "    return {}\n",
            "app/routers/items.py": "from fastapi import APIRouter\n\nrouter = APIRouter(\n"
            "    prefix='/items',\n    tags=['items'],\n)\n\n@router.get('/')\n"
            "async def read_items():\n    return {}\n\n@router.put('/{item_id}')\n"
            "async def update_item(item_id: str):\n    return {}\n\n"
            "@router.api_route('/{item_id}/tags', methods=['GET', 'DELETE'])\n"
            "async def tags(item_id: str):\n    return {}\n",
            "app/internal/admin.py": "from fastapi import APIRouter\n\nrouter = APIRouter()\n\n"
            "@router.post('/')\nasync def update_admin():\n    return {}\n",
        },
        {
            ("GET", "/", "app/main.py::root"),
            ("GET", "/users/", "app/routers/users.py::read_users"),
            ("GET", "/users/{username}", "app/routers/users.py::read_user"),
            ("GET", "/items/", "app/routers/items.py::read_items"),
            ("PUT", "/items/{item_id}", "app/routers/items.py::update_item"),
            ("GET", "/items/{item_id}/tags", "app/routers/items.py::tags"),
            ("DELETE", "/items/{item_id}/tags", "app/routers/items.py::tags"),
            ("POST", "/admin/", "app/internal/admin.py::update_admin"),
        },
    ),
    (
        "starlette-routes",
        {
            "app.py": "from starlette.applications import Starlette\n"
            "from starlette.routing import Route\n\nasync def homepage(request):\n    return 1\n\n"
            "async def submit(request):\n    return 1\n\napp = Starlette(routes=[\n"
            "    Route('/', homepage),\n    Route('/submit', submit, methods=['POST']),\n])\n",
        },
        {("GET", "/", "app.py::homepage"), ("POST", "/submit", "app.py::submit")},
    ),
    (
        "express-mounted-router",
        {
            "app.js": "const express = require('express');\n"
            "const users = require('./routes/users');\nconst app = express();\n"
            "app.use('/api/users', users);\napp.get('/health', health);\n"
            "function health(req, res) { res.send('ok'); }\n",
            "routes/users.js": "const express = require('express');\n"
            "const router = express.Router();\nfunction list(req, res) {}\n"
            "function show(req, res) {}\nrouter.get('/', list);\nrouter.get('/:id', show);\n"
            "module.exports = router;\n",
        },
        {
            ("GET", "/health", "app.js::health"),
            ("GET", "/api/users/", "routes/users.js::list"),
            ("GET", "/api/users/{id}", "routes/users.js::show"),
        },
    ),
    (
        "django-include",
        {
            "mysite/urls.py": "from django.urls import include, path\nfrom . import views\n\n"
            "urlpatterns = [\n    path('', views.home),\n"
            "    path('polls/', include('polls.urls')),\n]\n",
            "mysite/views.py": "def home(request):\n    return None\n",
            "polls/urls.py": "from django.urls import path, re_path\nfrom . import views\n\n"
            "urlpatterns = [\n    path('', views.index, name='index'),\n"
            "    path('<int:question_id>/', views.detail, name='detail'),\n"
            "    re_path(r'^archive/(?P<year>[0-9]{4})/$', views.archive),\n]\n",
            "polls/views.py": "def index(request):\n    return None\n\n"
            "def detail(request, question_id):\n    return None\n\n"
            "def archive(request, year):\n    return None\n",
        },
        {
            ("ANY", "/", "mysite/views.py::home"),
            ("ANY", "/polls/", "polls/views.py::index"),
            ("ANY", "/polls/{question_id}/", "polls/views.py::detail"),
            ("ANY", "/polls/archive/{year}/", "polls/views.py::archive"),
        },
    ),
]


def routes_of(g) -> set[tuple[str, str, str | None]]:
    """(method, path, handler id) of every route node: the table a framework prints."""
    nodes = g.nodes.filter(pl.col("kind") == "route").select("id", "label")
    handles = g.edges.filter(pl.col("kind") == "handles").select(id="src", handler="dst")
    rows = nodes.join(handles, on="id", how="left").to_dicts()
    return {(*r["label"].split(" ", 1), r["handler"]) for r in rows}


@pytest.mark.parametrize(("case", "files", "expected"), CASES, ids=[c[0] for c in CASES])
def test_routes_as_the_framework_serves_them(
    tmp_path: Path, case: str, files: dict[str, str], expected: set
) -> None:
    g = cf.index(str(write_tree(tmp_path, files)), progress=False)
    assert routes_of(g) == expected


def test_a_route_without_a_handler_is_still_a_route(tmp_path: Path) -> None:
    g = cf.index(
        str(write_tree(tmp_path, {"app.py": 'from flask import Flask\napp = Flask(__name__)\n'
                                            'app.add_url_rule("/ping", endpoint="ping")\n'})),
        progress=False,
    )  # fmt: skip
    assert routes_of(g) == {("GET", "/ping", None)}


def test_an_edit_to_a_mount_moves_the_routes(tmp_path: Path) -> None:
    """A changed prefix in one file re-resolves the routes of another (no stale delta)."""
    files = {"flaskr/__init__.py": FLASKR_INIT, "flaskr/auth.py": FLASKR_AUTH,
             "flaskr/blog.py": FLASKR_BLOG}  # fmt: skip
    root = write_tree(tmp_path / "r", files)
    cf.index(str(root), progress=False)
    init = root / "flaskr" / "__init__.py"
    init.write_text(init.read_text().replace(
        "app.register_blueprint(auth.bp)", "app.register_blueprint(auth.bp, url_prefix='/u')"))
    g = cf.index(str(root), progress=False)
    assert ("POST", "/u/login", "flaskr/auth.py::login") in routes_of(g)
    fresh = cf.index(str(root), store=str(tmp_path / "fresh"), progress=False)
    assert routes_of(g) == routes_of(fresh)


def test_requests_get_is_not_a_route_and_keeps_its_url(tmp_path: Path) -> None:
    g = cf.index(
        str(write_tree(tmp_path, {"c.py": "import requests\n\ndef f():\n"
                                          "    r = requests.get('https://api.example.com/x')\n"
                                          "    return r\n"})),
        progress=False,
    )  # fmt: skip
    assert routes_of(g) == set()
    assert "http:api.example.com" in set(g.nodes["id"])
