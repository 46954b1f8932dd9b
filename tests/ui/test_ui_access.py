"""Pilot tests of access: root's password asked on first boot (twice, never
echoed) or none on purpose, and SSH keys pasted on the access screen."""

from __future__ import annotations

import base64

from keel.access.password import PasswordStore, RootPassword
from keel.access.ssh_keys import KeyStore
from keel.system.crypt import libcrypt_hasher
from keel.ui.screens.access import AccessScreen, SetPasswordScreen
from keel.ui.shell import RootShell
from tests.ui.uihelpers import asynctest, make_app, screen_lines, settle

KEY = "ssh-ed25519 " + base64.b64encode(
    b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + bytes(range(32))).decode() + " me@laptop"


def fresh(tmp_path) -> PasswordStore:
    shadow = tmp_path / "etc-shadow"
    shadow.write_text("root::19000:0:99999:7:::\nnobody:*:19000::::::\n")
    return PasswordStore(tmp_path / "access", shadow, mount=False)


@asynctest
async def test_first_boot_asks_for_a_password_twice_and_it_then_opens_the_shell(tmp_path):
    store = fresh(tmp_path)
    assert store.needs_asking()
    app = make_app(passwords=store, shell=RootShell(str(store.shadow)))
    workers = []
    run_worker = app.run_worker

    def recording(*args, **kwargs):
        worker = run_worker(*args, **kwargs)
        workers.append(f"{worker!r} {worker.description}")
        return worker

    app.run_worker = recording  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SetPasswordScreen)
        await pilot.press(*"s3cret-one", "enter", *"s3cret-two", "enter")
        await pilot.pause()
        text = "\n".join(screen_lines(app))
        assert "the two differ" in text and "s3cret" not in text  # never echoed
        await pilot.press(*"s3cret-one", "enter", *"s3cret-one", "enter")
        await settle(pilot)
        assert app.screen.id == "dashboard"
        assert "root password set" in screen_lines(app)[-1]
    assert store.status() is RootPassword.SET and not store.needs_asking()
    field = store.shadow.read_text().split(":")[1]
    # the scheme the console's login checks (BusyBox: not yescrypt)
    assert field.startswith("$6$rounds=") and "s3cret" not in store.shadow.read_text()
    assert "nobody:*:" in store.shadow.read_text()  # the other lines kept
    assert RootShell(str(store.shadow)).verify("s3cret-one")
    # a worker's description is logged and shown when it fails: no password in it
    assert workers and not any("s3cret" in w for w in workers), workers


@asynctest
async def test_no_password_on_purpose_says_what_it_means(tmp_path):
    store = fresh(tmp_path)
    app = make_app(passwords=store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert "lets anyone at it in as root" in "\n".join(screen_lines(app))
        await pilot.press("y")
        await settle(pilot)
        assert app.screen.id == "dashboard"
    assert store.skipped() and not store.needs_asking()
    assert store.status() is RootPassword.EMPTY


@asynctest
async def test_a_pasted_key_is_checked_shown_and_written_for_ssh(tmp_path, monkeypatch):
    from keel.access import ssh_keys

    monkeypatch.setattr(ssh_keys, "AUTHORIZED_KEYS", tmp_path / "ssh" / "authorized_keys")
    keys = KeyStore(tmp_path / "access")
    app = make_app(key_store=keys)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, AccessScreen)
        await pilot.press(*"ssh-rsa AAAAnotakey", "enter")
        await pilot.pause()
        assert "not added: the key's" in "\n".join(screen_lines(app))
        assert keys.all() == []
        app.screen.query_one("#new-key").value = KEY
        await pilot.press("enter")
        await pilot.pause()
        text = "\n".join(screen_lines(app))
        fingerprint = keys.all()[0].fingerprint
        assert f"added   ssh-ed25519 {fingerprint[:24]}" in text
        assert "in force for SSH now" in text
        assert (tmp_path / "ssh" / "authorized_keys").read_text() == KEY + "\n"
        await pilot.press("f3")
        await pilot.pause()
        assert keys.all() == [] and (tmp_path / "ssh" / "authorized_keys").read_text() == ""


KEY2 = "ssh-ed25519 " + base64.b64encode(
    b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + bytes(range(32, 64))).decode() + " mallory"


@asynctest
async def test_a_paste_is_split_on_newline_only_and_refused_when_not_one_clean_key(
        tmp_path, monkeypatch):
    """Input's own paste kept what came before a '\\r' (or '\\x0b', '\\u2028'
    ...) and dropped the rest without a word: dropbear would read the rest as
    another key. Here such a paste never enters the box, and the screen says
    why, escaped; markup in a comment is shown as text."""
    from textual import events

    from keel.access import ssh_keys

    monkeypatch.setattr(ssh_keys, "AUTHORIZED_KEYS", tmp_path / "ssh" / "authorized_keys")
    keys = KeyStore(tmp_path / "access")
    app = make_app(key_store=keys)
    async with app.run_test(size=(120, 24)) as pilot:
        await pilot.press("p")
        await pilot.pause()
        box = app.screen.query_one("#new-key")
        for pasted, said in ((f"{KEY}\r{KEY2}", "carriage return (\\x0d)"),
                             (f"{KEY}\u2028{KEY2}", "(\\u2028)"),
                             (f"{KEY}\x1b[2J", "(\\x1b)"),
                             (f"{KEY}\n{KEY2}\n", "2 lines pasted")):
            box.post_message(events.Paste(pasted))
            await pilot.pause()
            assert box.value == ""
            text = "\n".join(screen_lines(app))
            assert "not added: " in text and said in text, text
            assert "\x1b" not in text and "\r" not in text
        await pilot.press("enter")
        await pilot.pause()
        assert keys.all() == []
        box.post_message(events.Paste(KEY.replace("me@laptop", "[bold]me[/bold]") + "\n"))
        await pilot.pause()
        assert box.value.endswith("[bold]me[/bold]")
        await pilot.press("enter")
        await pilot.pause()
        text = "\n".join(screen_lines(app))
        assert "[bold]me[/bold]" in text  # shown as text, not taken as markup
    assert [k.comment for k in keys.all()] == ["[bold]me[/bold]"]


@asynctest
async def test_root_locked_by_the_boot_says_why_on_the_dashboard_and_the_access_screen(tmp_path):
    """/data missing at boot: S04access leaves root locked and notes why; the
    console UI (tty1) says so, escaped, and asks for no password."""
    shadow = tmp_path / "etc-shadow"
    shadow.write_text("root:*:19000:0:99999:7:::\n")
    note = tmp_path / "access-locked"
    note.write_text("/data is not mounted: the password on it cannot be read\x1b[2J\n")
    store = PasswordStore(tmp_path / "access", shadow, mount=False, locked_note=note)
    assert not store.needs_asking()
    app = make_app(passwords=store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen.id == "dashboard"
        said = screen_lines(app)[-1]
        assert "root is locked: /data is not mounted" in said and "\x1b" not in said
        app.push_screen(AccessScreen(store, KeyStore(tmp_path / "access")))
        await settle(pilot)
        text = "\n".join(screen_lines(app))
        assert "root password: locked: /data is not mounted" in text


def legacy(tmp_path, password: str) -> PasswordStore:
    """A root password as an earlier keel stored it: yescrypt."""
    hashed = libcrypt_hasher()(password, "$y$j9T$jcpOfzma/cO04fqdcc3ey.")  # type: ignore[misc]
    assert hashed and hashed.startswith("$y$")
    store = fresh(tmp_path)
    store.directory.mkdir()
    store.shadow.write_text(f"root:{hashed}:19000:0:99999:7:::\n")
    return store


@asynctest
async def test_a_password_stored_as_yescrypt_is_asked_again_and_stored_as_sha512(tmp_path):
    store = legacy(tmp_path, "old-one")
    assert store.needs_rehash() and not store.needs_asking()
    app = make_app(passwords=store, shell=RootShell(str(store.shadow)))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SetPasswordScreen)
        text = "\n".join(screen_lines(app))
        assert "cannot check" in text and "not now" in text
        await pilot.press(*"old-one", "enter", *"old-one", "enter")
        await settle(pilot)
        assert app.screen.id == "dashboard"
        assert "the console's login checks it" in screen_lines(app)[-1]
    assert not store.needs_rehash()
    assert store.root_hash().startswith("$6$rounds=")  # type: ignore[union-attr]
    assert RootShell(str(store.shadow)).verify("old-one")


@asynctest
async def test_a_password_asked_again_stays_as_it_is_on_escape(tmp_path):
    store = legacy(tmp_path, "old-one")
    before = store.shadow.read_text()
    app = make_app(passwords=store, shell=RootShell(str(store.shadow)))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen.id == "dashboard"
        assert "cannot check it" in screen_lines(app)[-1]
    assert store.shadow.read_text() == before  # not "no password"
    assert not (store.directory / "no-password").exists()


def test_the_right_yescrypt_password_at_the_shell_key_is_stored_again_as_sha512(tmp_path):
    store = legacy(tmp_path, "old-one")
    shell = RootShell(str(store.shadow), rehash=store.set)
    assert not shell.verify("wrong")
    assert store.needs_rehash()
    assert shell.verify("old-one")
    assert not store.needs_rehash() and shell.verify("old-one")
