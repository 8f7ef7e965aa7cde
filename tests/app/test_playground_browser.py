"""The playground in headless Chromium (Debian's chromium + chromium-driver),
driven by Selenium, against the app under uvicorn on 127.0.0.1.

Screenshots go to a temporary folder (its path is printed); the page's
weight and time to interactive are measured here (docs/playground.md).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.tools.builtin import calculator
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.approvals import ARGUMENTS, QUESTION, RAN, WAS_DECLINED, Deleter
from tests.principals import KEYS, keyed_settings
from tests.upstream import FakeUpstream, serve_in_thread

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (CHROMIUM and CHROMEDRIVER),
        reason="needs chromium and chromedriver (apt-get install chromium chromium-driver)",
    ),
]

from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

# AGENTHOST_SCREENSHOTS names the folder (CI artefacts); else a temporary one.
SHOTS = Path(
    os.environ.get("AGENTHOST_SCREENSHOTS")
    or tempfile.mkdtemp(prefix="agenthost-playground-shots-")
)


def agents(upstream_url: str, deleter: Deleter | None = None) -> dict[str, Agent]:
    def upstream(model: str) -> OpenAIModel:
        return OpenAIModel(model, base_url=upstream_url, api_key="sk-test", max_retries=0)

    return {
        "echo": ChatAgent("echo", EchoModel(), description="Repeats what you say."),
        "calc": ChatAgent(
            "calc", upstream("gpt-test"), description="Uses a calculator.", tools=(calculator,)
        ),
        "slow": ChatAgent("slow", upstream("slow"), description="Talks slowly."),
        "thinker": ChatAgent("thinker", upstream("reasoner"), description="Reasons first."),
        "deleter": (deleter or Deleter()).agent,  # its tool needs the user's approval
    }


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeUpstream, str]]:
    fake = FakeUpstream()
    with serve_in_thread(fake.app) as url:
        yield fake, f"{url}/v1"


@pytest.fixture(scope="module")
def deleter() -> Deleter:
    """The served ``deleter`` agent: ``deleted`` says what its tool really did."""
    return Deleter()


@pytest.fixture(scope="module")
def server(fake: tuple[FakeUpstream, str], deleter: Deleter) -> Iterator[str]:
    app = create_app(Settings(), agents(fake[1], deleter))
    with serve_in_thread(app, lifespan=True) as url:
        yield url


@pytest.fixture(scope="module")
def keyed_server(fake: tuple[FakeUpstream, str]) -> Iterator[str]:
    with serve_in_thread(create_app(keyed_settings(), agents(fake[1])), lifespan=True) as url:
        yield url


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="agenthost-chromium-")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--window-size=1200,900",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
        capture = request.config.pluginmanager.get_plugin("capturemanager")
        with capture.global_and_fixture_disabled():  # said even without -s
            print(f"\nplayground screenshots: {SHOTS}")


def wait(browser: Any, check: Callable[[Any], Any], seconds: float = 10) -> Any:
    return WebDriverWait(browser, seconds, poll_frequency=0.05).until(check)


def shot(browser: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    browser.save_screenshot(str(path))
    print(f"screenshot: {path}")


def open_page(browser: Any, url: str) -> None:
    browser.get(url + "/")
    browser.execute_script("sessionStorage.clear()")
    browser.get(url + "/")


def pick(browser: Any, agent: str) -> None:
    button = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, f'[data-agent="{agent}"]'))
    button.click()
    wait(browser, lambda b: b.find_element(By.ID, "agent-name").text == agent)


def say(browser: Any, text: str) -> None:
    box = browser.find_element(By.ID, "message")
    box.clear()
    box.send_keys(text)
    browser.find_element(By.ID, "send").click()


def entries(browser: Any, kind: str) -> list[str]:
    return [e.text.strip() for e in browser.find_elements(By.CSS_SELECTOR, f"#log li.{kind}")]


def idle(browser: Any) -> None:
    wait(browser, lambda b: b.find_element(By.ID, "send").is_enabled())


def use(browser: Any, protocol: str) -> None:
    """Chat over ``protocol`` (``openai``, ``ai_sdk``) from now on."""
    Select(browser.find_element(By.ID, "protocol")).select_by_value(protocol)


def wire(browser: Any) -> str:
    """The last request and its raw stream, as the Wire panel shows them (opened)."""
    panel = browser.find_element(By.ID, "wire")
    if not panel.get_attribute("open"):
        panel.find_element(By.TAG_NAME, "summary").click()
    return str(browser.find_element(By.ID, "wire-log").text)


def test_echo_streams_its_answer_and_a_reload_continues(browser: Any, server: str) -> None:
    open_page(browser, server)
    pick(browser, "echo")
    say(browser, "hello from the browser")
    wait(browser, lambda b: entries(b, "assistant") == ["hello from the browser"])
    idle(browser)
    assert "Tokens:" in browser.find_element(By.ID, "usage").text
    first = browser.execute_script("return sessionStorage.getItem('agenthost.conv.echo')")
    previous = json.loads(first)["previous"]
    assert previous.startswith("resp_")
    shot(browser, "echo")
    browser.refresh()  # the conversation is still there, and continues on the server
    wait(browser, lambda b: entries(b, "assistant") == ["hello from the browser"])
    say(browser, "second")
    wait(browser, lambda b: entries(b, "assistant") == ["hello from the browser", "second"])
    idle(browser)
    after = json.loads(
        browser.execute_script("return sessionStorage.getItem('agenthost.conv.echo')")
    )
    assert after["previous"] != previous
    browser.find_element(By.ID, "new").click()
    assert entries(browser, "assistant") == []


def test_a_tool_call_and_its_result_are_shown(browser: Any, server: str) -> None:
    open_page(browser, server)
    pick(browser, "calc")
    assert "calculator" in browser.find_element(By.ID, "agent-facts").text
    say(browser, "calculate 6*7")
    wait(browser, lambda b: entries(b, "assistant") == ["The result is 42."])
    tools = entries(browser, "tool")
    assert tools == ['calls calculator({"expression": "6*7"})', "calculator → 42"]
    shot(browser, "tool-call")


def test_stop_cancels_the_run(browser: Any, server: str, fake: tuple[FakeUpstream, str]) -> None:
    upstream = fake[0]
    abandoned = upstream.abandoned
    open_page(browser, server)
    pick(browser, "slow")
    say(browser, "tell me a long story")
    wait(browser, lambda b: len(b.find_element(By.CSS_SELECTOR, "#log li.assistant").text) > 10)
    browser.find_element(By.ID, "stop").click()
    wait(browser, lambda b: any("Stopped" in t for t in entries(b, "note")))
    idle(browser)
    # The server cancelled the run: its upstream request was left before the end.
    deadline = time.monotonic() + 5
    while upstream.abandoned == abandoned and time.monotonic() < deadline:
        time.sleep(0.05)
    assert upstream.abandoned == abandoned + 1
    shot(browser, "stopped")


def test_connect_snippets_use_the_servers_urls(browser: Any, server: str) -> None:
    open_page(browser, server)
    pick(browser, "echo")
    browser.find_element(By.ID, "tab-connect").click()
    text = browser.find_element(By.ID, "connect").text
    assert f'OpenAI(base_url="{server}/v1", api_key="unused")' in text
    assert f"{server}/a2a/echo/.well-known/agent-card.json" in text
    assert f"claude mcp add --transport http agenthost {server}/mcp" in text
    assert '"acp-stdio",' in text and '"agenthost echo"' in text
    assert f'Client(base_url="{server}/acp")' in text
    assert f'anthropic.Anthropic(base_url="{server}", api_key="unused")' in text
    assert f"ANTHROPIC_BASE_URL={server} " in text
    assert f'api: "{server}/ai-sdk/echo",' in text and "new DefaultChatTransport({" in text
    assert f"curl -N {server}/ai-sdk/echo " in text
    assert f'new HttpAgent({{ url: "{server}/ag-ui/echo" }});' in text
    shot(browser, "connect")


def test_with_keys_on_a_missing_key_is_shown_and_a_key_works(
    browser: Any, keyed_server: str
) -> None:
    open_page(browser, keyed_server)
    notice = wait(browser, lambda b: b.find_element(By.ID, "notice"))
    wait(browser, lambda b: "needs an API key" in notice.text)
    assert browser.find_element(By.ID, "key").is_displayed()
    shot(browser, "key-missing")
    browser.find_element(By.ID, "key").send_keys("not-a-key\n")
    wait(browser, lambda b: "not accepted" in b.find_element(By.ID, "notice").text)
    browser.find_element(By.ID, "key").send_keys(KEYS["alice"] + "\n")
    pick(browser, "echo")
    assert not browser.find_element(By.ID, "notice").is_displayed()
    say(browser, "with a key")
    wait(browser, lambda b: entries(b, "assistant") == ["with a key"])
    browser.find_element(By.ID, "tab-connect").click()
    assert "Authorization: Bearer KEY" in browser.find_element(By.ID, "connect").text
    # A key the server stops accepting mid-conversation: the error shows in place.
    browser.execute_script("sessionStorage.setItem('agenthost.key', 'revoked')")
    browser.find_element(By.ID, "tab-chat").click()
    say(browser, "again")
    wait(browser, lambda b: any("401" in t for t in entries(b, "error")))
    shot(browser, "key-error")


def test_weight_time_to_interactive_and_no_request_elsewhere(
    browser: Any, server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    open_page(browser, server)
    pick(browser, "echo")
    timing = browser.execute_script(
        "const [n] = performance.getEntriesByType('navigation');"
        "return {tti: n.domInteractive, loaded: n.loadEventEnd, html: n.transferSize,"
        " resources: performance.getEntriesByType('resource')"
        ".map(r => ({url: r.name, bytes: r.transferSize}))};"
    )
    hosts = {urlsplit(r["url"]).hostname for r in timing["resources"]}
    assert hosts <= {"127.0.0.1"}, hosts
    weight = timing["html"] + sum(r["bytes"] for r in timing["resources"])
    with capsys.disabled():
        print(
            f"\nplayground: {weight} bytes transferred in {1 + len(timing['resources'])} requests,"
            f" interactive after {timing['tti']:.0f} ms, loaded after {timing['loaded']:.0f} ms"
        )
    assert weight < 100_000
    browser.set_window_size(375, 812)  # a phone
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 375
    shot(browser, "phone")
    browser.set_window_size(1200, 900)


def test_the_screenshot_for_the_readme(browser: Any, server: str) -> None:
    """The README's picture; AGENTHOST_REFRESH_SCREENSHOT=1 writes it to docs/playground.png."""
    target = Path(__file__).resolve().parents[2] / "docs" / "playground.png"
    open_page(browser, server)
    browser.set_window_size(1100, 760)
    pick(browser, "calc")
    say(browser, "calculate (17 + 25) * 2")
    try:
        wait(browser, lambda b: entries(b, "assistant") == ["The result is 84."])
    except TimeoutException:
        pytest.fail("the calculator agent did not answer")
    path = target if os.environ.get("AGENTHOST_REFRESH_SCREENSHOT") == "1" else SHOTS / "readme.png"
    browser.find_element(By.ID, "message").send_keys("")  # the focus ring, as a user sees it
    browser.save_screenshot(str(path))
    print(f"screenshot: {path}")


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_the_api_docs_render_with_nothing_from_elsewhere(
    browser: Any, keyed_server: str, path: str
) -> None:
    browser.get(keyed_server + path)  # with keys on, and no key: the pages are public
    body = (By.TAG_NAME, "body")
    wait(browser, lambda b: "List the agents as models" in b.find_element(*body).text, 20)
    entries = browser.execute_script(
        "return performance.getEntriesByType('resource')"
        ".map(r => ({url: r.name, status: r.responseStatus}))"
    )
    elsewhere = [e for e in entries if urlsplit(e["url"]).hostname != "127.0.0.1"]
    # ReDoc's footer logo (cdn.redoc.ly) is named, but the page's CSP blocks it.
    assert all(e["status"] == 0 for e in elsewhere), elsewhere
    blocked = [m["message"] for m in browser.get_log("browser")]
    for entry in elsewhere:
        assert any(entry["url"] in m and "Content Security Policy" in m for m in blocked), blocked
    shot(browser, path.strip("/"))


def test_an_agent_not_served_over_v1_cannot_chat_but_connects(
    browser: Any, fake: tuple[FakeUpstream, str]
) -> None:
    settings = Settings(adapters=["a2a", "mcp"])
    with serve_in_thread(create_app(settings, agents(fake[1])), lifespan=True) as url:
        open_page(browser, url)
        pick(browser, "echo")
        assert not browser.find_element(By.ID, "send").is_enabled()
        assert any("not served over /v1, /ai-sdk or /ag-ui" in t for t in entries(browser, "note"))
        browser.find_element(By.ID, "tab-connect").click()
        text = browser.find_element(By.ID, "connect").text
    assert "OpenAI(" not in text and "acp_sdk" not in text
    assert f"{url}/a2a/echo/.well-known/agent-card.json" in text


def run_lines(browser: Any) -> list[str]:
    return [e.text.strip() for e in browser.find_elements(By.CSS_SELECTOR, "#run-events li")]


def test_a_background_run_is_listed_and_followed_again_after_a_reload(
    browser: Any, server: str
) -> None:
    open_page(browser, server)
    pick(browser, "calc")
    browser.find_element(By.ID, "background").click()
    say(browser, "calculate 6*7")
    wait(browser, lambda b: entries(b, "assistant") == ["The result is 42."])
    idle(browser)
    browser.find_element(By.ID, "tab-runs").click()
    row = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#run-list tr[data-run]"))
    assert "completed" in row.text and "openai.responses" in row.text
    row.find_element(By.TAG_NAME, "button").click()
    expected = ['calls calculator({"expression": "6*7"})', "calculator → 42", "The result is 42."]
    wait(browser, lambda b: run_lines(b)[:3] == expected)
    assert run_lines(browser)[-1] == "completed"
    shot(browser, "runs")
    browser.refresh()  # back on the Runs tab, the same run followed again from its log
    wait(browser, lambda b: run_lines(b)[:3] == expected)
    browser.find_element(By.ID, "tab-chat").click()


def test_it_works_from_the_keyboard(browser: Any, server: str) -> None:
    open_page(browser, server)
    wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, '[data-agent="calc"]'))
    browser.find_element(By.CSS_SELECTOR, '[data-agent="echo"]').send_keys(Keys.ENTER)
    wait(browser, lambda b: b.find_element(By.ID, "agent-name").text == "echo")
    browser.find_element(By.ID, "message").send_keys("typed" + Keys.ENTER)
    wait(browser, lambda b: entries(b, "assistant") == ["typed"])
    idle(browser)
    assert browser.switch_to.active_element.get_attribute("id") == "message"
    browser.find_element(By.ID, "tab-chat").send_keys(Keys.ARROW_RIGHT)
    assert browser.switch_to.active_element.get_attribute("id") == "tab-runs"
    browser.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    assert browser.switch_to.active_element.get_attribute("id") == "tab-connect"
    assert browser.find_element(By.ID, "connect").is_displayed()
    assert not browser.find_element(By.ID, "chat").is_displayed()
    labels = browser.execute_script(
        "return [...document.querySelectorAll('input, textarea')]"
        '.map(e => document.querySelector(`label[for="${e.id}"]`) !== null)'
    )
    assert labels and all(labels)


def test_the_ai_sdk_stream_shows_reasoning_the_answer_and_its_wire(
    browser: Any, server: str
) -> None:
    open_page(browser, server)
    pick(browser, "thinker")
    use(browser, "ai_sdk")
    say(browser, "hello")
    wait(browser, lambda b: entries(b, "assistant") == ["upstream says: hello"])
    assert entries(browser, "reasoning") == ["Thinking about hello."]
    idle(browser)
    assert "Tokens:" in browser.find_element(By.ID, "usage").text
    seen = wire(browser)
    assert seen.startswith("POST /ai-sdk/thinker\n")
    assert "x-vercel-ai-ui-message-stream: v1" in seen
    for chunk in ('"type":"reasoning-delta"', '"type":"text-delta"', '"type":"finish"'):
        assert f"data: {{{chunk}" in seen, chunk
    assert seen.rstrip().endswith("data: [DONE]")
    shot(browser, "ai-sdk-wire")
    browser.refresh()  # the chat is kept in the tab: the next request sends all of it
    wait(browser, lambda b: entries(b, "assistant") == ["upstream says: hello"])
    assert browser.find_element(By.ID, "protocol").get_attribute("value") == "ai_sdk"
    say(browser, "again")
    wait(browser, lambda b: entries(b, "assistant")[-1:] == ["upstream says: again"])
    idle(browser)
    request = json.loads(wire(browser).split("\n\nHTTP ")[0].split("\n", 1)[1])
    assert [m["role"] for m in request["messages"]] == ["user", "assistant", "user"]
    assert [p["type"] for p in request["messages"][1]["parts"]] == [
        "step-start",
        "reasoning",
        "text",
    ]
    use(browser, "openai")  # each protocol keeps its own conversation
    assert entries(browser, "assistant") == []


def test_the_ai_sdk_stream_shows_a_tool_call_and_its_result(browser: Any, server: str) -> None:
    open_page(browser, server)
    pick(browser, "calc")
    use(browser, "ai_sdk")
    say(browser, "calculate 6*7")
    wait(browser, lambda b: entries(b, "assistant") == ["The result is 42."])
    assert entries(browser, "tool") == ['calls calculator({"expression":"6*7"})', "calculator → 42"]
    seen = wire(browser)
    for chunk in ("tool-input-start", "tool-input-available", "tool-output-available"):
        assert f'data: {{"type":"{chunk}"' in seen, chunk
    shot(browser, "ai-sdk-tool")


def approval_asked(browser: Any) -> Any:
    [asked] = browser.find_elements(By.CSS_SELECTOR, "#log li.approval")
    expected = f"delete_file({json.dumps(json.loads(ARGUMENTS), separators=(',', ':'))})"
    assert asked.text.startswith(f"{expected} needs your approval"), asked.text
    return asked


def test_the_ai_sdk_stream_asks_for_approval_and_runs_the_tool_once_approved(
    browser: Any, server: str, deleter: Deleter
) -> None:
    open_page(browser, server)
    pick(browser, "deleter")
    use(browser, "ai_sdk")
    before = len(deleter.deleted)
    say(browser, "tidy up")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#log li.approval button"))
    idle(browser)
    asked = approval_asked(browser)
    assert '"type":"tool-approval-request"' in wire(browser)
    assert len(deleter.deleted) == before  # asked, not run
    browser.set_window_size(375, 812)  # a phone: the buttons and the wire fit
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 375
    shot(browser, "ai-sdk-approval")
    browser.set_window_size(1200, 900)
    asked.find_element(By.XPATH, ".//button[text()='Approve']").click()
    wait(browser, lambda b: entries(b, "assistant") == [RAN])
    assert len(deleter.deleted) == before + 1
    assert "delete_file → deleted /tmp/notes.txt" in entries(browser, "tool")
    assert approval_asked(browser).text.endswith("· approved")
    assert not browser.find_elements(By.CSS_SELECTOR, "#log li.approval button")
    seen = wire(browser)
    assert '"state": "approval-responded"' in seen and '"approved": true' in seen
    assert '"type":"tool-output-available"' in seen
    shot(browser, "ai-sdk-approved")


def test_the_ai_sdk_stream_denied_never_runs_the_tool(
    browser: Any, server: str, deleter: Deleter
) -> None:
    open_page(browser, server)
    pick(browser, "deleter")
    use(browser, "ai_sdk")
    before = len(deleter.deleted)
    say(browser, "tidy up")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#log li.approval button"))
    idle(browser)
    browser.refresh()  # still asked after a reload: the buttons are back
    deny = wait(
        browser,
        lambda b: b.find_element(By.XPATH, "//li[@class='approval']//button[text()='Deny']"),
    )
    deny.click()
    wait(browser, lambda b: entries(b, "assistant") == [WAS_DECLINED])
    assert "delete_file was denied: it did not run." in entries(browser, "note")
    assert approval_asked(browser).text.endswith("· denied")
    assert len(deleter.deleted) == before


def test_the_ai_sdk_stream_with_keys_on(browser: Any, keyed_server: str) -> None:
    open_page(browser, keyed_server)
    wait(browser, lambda b: b.find_element(By.ID, "key").is_displayed())
    browser.find_element(By.ID, "key").send_keys(KEYS["alice"] + "\n")
    pick(browser, "echo")
    use(browser, "ai_sdk")
    say(browser, "keyed stream")
    wait(browser, lambda b: entries(b, "assistant") == ["keyed stream"])
    idle(browser)
    browser.execute_script("sessionStorage.setItem('agenthost.key', 'revoked')")
    say(browser, "again")
    wait(browser, lambda b: any("401" in t for t in entries(b, "error")))


def test_ag_ui_shows_a_tool_call_and_asks_for_approval(
    browser: Any, server: str, deleter: Deleter
) -> None:
    open_page(browser, server)
    pick(browser, "calc")
    use(browser, "ag_ui")
    say(browser, "calculate 6*7")
    wait(browser, lambda b: entries(b, "assistant") == ["The result is 42."])
    assert entries(browser, "tool") == [
        'calls calculator({"expression": "6*7"})',
        "calculator → 42",
    ]
    seen = wire(browser)
    assert seen.startswith("POST /ag-ui/calc\n")
    for event in ("RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_RESULT", "RUN_FINISHED"):
        assert f'data: {{"type":"{event}"' in seen, event
    pick(browser, "deleter")
    before = len(deleter.deleted)
    say(browser, "tidy up")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#log li.approval button"))
    idle(browser)  # the log is drawn again as the run ends: find the button after
    assert entries(browser, "approval")[0].startswith(QUESTION)
    assert len(deleter.deleted) == before
    approve = browser.find_element(By.XPATH, "//li[@class='approval']//button[text()='Approve']")
    approve.click()
    wait(browser, lambda b: entries(b, "assistant") == [RAN])
    assert len(deleter.deleted) == before + 1
    assert '"resume": [' in wire(browser) and '"approve": true' in wire(browser)
    shot(browser, "ag-ui-approved")
