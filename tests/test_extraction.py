"""The offline dimension extractor (memory.engine.extraction): pure Python, no database, EN + ZH."""

from __future__ import annotations

import dataclasses
import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.engine.extraction import (
    ATTRIBUTES,
    INTENTS,
    MULTI_VALUED,
    AttributeValue,
    Dimensions,
    detect_language,
    extract_dimensions,
    segment,
    warm_up,
)

NOW = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)
DEMO_DATA = Path(__file__).resolve().parent.parent / "memory" / "demo" / "data"
ENTITY_TYPES = {"person", "place", "organization", "product", "file", "concept", "time", "other"}


def dims(text: str, kind: str | None = None) -> Dimensions:
    return extract_dimensions(text, now=NOW, kind=kind)


def entity_types(d: Dimensions) -> dict[str, str]:
    return {e.name: e.type for e in d.entities}


def attrs(d: Dimensions) -> set[tuple[str, str, str]]:
    return {(a.entity, a.attribute, a.value) for a in d.attributes}


# --- language and search tokens -----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "language"), [
    ("Please plan a 3-day trip to Shanghai for me, 12 to 14 October.", "en"),
    ("你好，帮我规划一次杭州三日游，10月12日到14日，从上海坐高铁过去。", "zh"),
    ("给 Flask 项目的登录接口 /auth/login 加上登录限流：同一 IP 每分钟最多 5 次尝试。", "zh"),
    ('write_file(path="app/auth/ratelimit.py", change="新增 LoginRateLimiter：Redis 异常时放行并记日志")', "zh"),
    ('read_file(path="app/auth/views.py")', "en"),
    ("", "en"),
])
def test_language_detection(text, language):
    assert detect_language(text) == language
    assert dims(text).language == language


def test_segment_cuts_chinese_into_words_and_drops_stop_words():
    terms = segment("我对海鲜过敏，餐厅一定要避开海鲜。")
    assert "海鲜" in terms and "过敏" in terms and "餐厅" in terms
    assert "我" not in terms and "，" not in terms and "。" not in terms
    assert sum(len(t) >= 2 for t in terms) > len(terms) / 2  # words, not characters


def test_segment_english_lowercases_splits_code_and_drops_stop_words():
    terms = segment("Booking confirmed: the Bund Garden Hotel, see reports/views.py")
    assert terms == ["booking", "confirmed", "bund", "garden", "hotel", "see", "report", "view", "py"]
    mixed = segment("决定使用 Redis 和 Flask")
    assert {"决定", "使用", "redis", "flask"} <= set(mixed) and "和" not in mixed


# --- values: dates, times, amounts, paths, urls, identifiers --------------------------------------------

def test_english_flight_result_values_and_schedule_attributes():
    d = dims("Best round trip: MU5102 PEK 08:00 -> SHA 10:15 on 19 October, back MU5117 SHA 18:30 -> PEK 20:45 "
             "on 21 October, 980 RMB in total.", "tool_result")
    assert d.dates == ["2026-10-19", "2026-10-21"]
    assert d.times == ["08:00", "10:15", "18:30", "20:45"]
    assert d.amounts == ["980 CNY"]
    assert {"MU5102", "MU5117"} <= set(d.identifiers)
    assert d.occurred_at == datetime(2026, 10, 19, 10, 15, tzinfo=UTC)  # "10:15 on 19 October"
    assert {("mu5102", "departure_time", "08:00"), ("mu5102", "arrival_time", "10:15"),
            ("mu5117", "departure_time", "18:30"), ("user", "flight", "MU5102"),
            ("user", "return_flight", "MU5117")} <= attrs(d)
    assert d.intent == "report_result"


def test_chinese_train_result_values():
    d = dims("车票出票成功：G7311 于10月19日09:27到达杭州东站，订单号 E5520318，共146元。", "tool_result")
    assert d.language == "zh"
    assert d.dates == ["2026-10-19"] and d.times == ["09:27"] and d.amounts == ["146 CNY"]
    assert {"G7311", "E5520318"} <= set(d.identifiers)
    assert entity_types(d) == {"杭州东站": "place"}
    assert d.occurred_at == datetime(2026, 10, 19, 9, 27, tzinfo=UTC)
    assert ("g7311", "arrival_time", "09:27") in attrs(d) and ("user", "train", "G7311") in attrs(d)


def test_dates_resolve_against_now_and_roll_the_year_forward():
    assert dims("Please plan a trip for 12 to 14 October.").dates == ["2026-10-12", "2026-10-14"]
    assert dims("We can only travel 2 to 6 June.").dates == ["2027-06-02", "2027-06-06"]  # June has passed
    assert dims('hotel_book(check_in="2025-10-12")', "tool_call").dates == ["2025-10-12"]  # explicit year kept
    assert dims("10月12日至14日杭州三日游").dates == ["2026-10-12", "2026-10-14"]
    assert dims("Flights on October 12, back Oct 14th, 2026").dates == ["2026-10-12", "2026-10-14"]
    assert dims("2 may be too early").dates == []
    assert dims("7 月 11–14 日正值暑期旺季").dates == ["2027-07-11", "2027-07-14"]
    on_13th = datetime(2026, 10, 13, 9, 0, tzinfo=UTC)  # a trip under way, a date just passed: still this year
    assert extract_dimensions("the 12 to 14 October trip", now=on_13th).dates == ["2026-10-12", "2026-10-14"]
    assert extract_dimensions("failed on 12 October", now=on_13th).dates == ["2026-10-12"]
    late = datetime(2026, 10, 25, 9, 0, tzinfo=UTC)
    assert extract_dimensions("12 October", now=late).dates == ["2027-10-12"]


def test_a_weekday_beside_a_yearless_date_picks_its_year():
    """Rolled forward, "Tuesday 4th August" said in December 2026 would be 4 August 2027, a Wednesday: the
    weekday says it is 2026's. Only the year before or after is tried, and only a weekday written beside it."""
    december = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)

    def dates(text: str) -> list[str]:
        return extract_dimensions(text, now=december).dates

    assert dates("Booked it. Langford, 4th August.") == ["2027-08-04"]  # no weekday: rolled forward
    assert dates("Booked it. Langford, Tuesday 4th August.") == ["2026-08-04"]
    assert dates("Langford on Aug 4 (Tue)") == ["2026-08-04"]
    assert dates("8月4日（周二）去复查") == ["2026-08-04"]
    assert dates("Wednesday 4 August") == ["2027-08-04"]  # the rolled year already has it
    assert dates("Friday 11 July 2025") == ["2025-07-11"]  # a written year is kept
    assert dates("1 月 18 日（周六）出发") == ["2027-01-18"]  # no Saturday in 2026 or 2028: kept, a slip
    assert dates("12 October: it failed again on Monday") == ["2027-10-12", "2026-12-07"]  # not beside it
    # a day of the month alone: the first of the months it may be in (this one or the next two) with that weekday
    assert dates("moved to the 5th") == ["2026-12-05"] and dates("moved to Tuesday the 5th") == ["2027-01-05"]
    assert dates("周五 5号见") == ["2027-02-05"]
    assert dates("Saturday the 28th") == ["2026-12-28"]  # no month of the three has it: the first


def test_a_day_of_the_month_alone_is_the_next_such_day():
    """"the 28th", "24号": the month is the one the day comes next in (a week's grace for one just passed)."""
    on_26_march = datetime(2026, 3, 26, 19, 0, tzinfo=UTC)

    def dates(text: str) -> list[str]:
        return extract_dimensions(text, now=on_26_march).dates

    assert dates("I can't get in on the 28th. He's pushed it back a week, to Saturday the 4th.") == [
        "2026-03-28", "2026-04-04"]
    assert dates("驾校说24号那场取消了，统一改到29号") == ["2026-03-24", "2026-03-29"]
    assert dates("我们19号到22号去，请一天假就行") == ["2026-03-19", "2026-03-22"]
    assert dates("the 1st to the 3rd") == ["2026-04-01", "2026-04-03"]
    assert dates("Saturday the 28th of March") == ["2026-03-28"]  # the month written: read once
    assert dates("the 31st") == ["2026-03-31"] and dates("the 2nd") == ["2026-04-02"]
    assert extract_dimensions("the 31st", now=datetime(2026, 4, 20, tzinfo=UTC)).dates == ["2026-05-31"]
    for not_a_day in ("坐3号线到人民广场", "3日游", "I was 31st in the queue", "住在5号楼"):
        assert dates(not_a_day) == [], not_a_day
    assert extract_dimensions("the 28th", now=on_26_march).stated_dates == ["2026-03-28"]


def test_relative_dates_and_clock_times():
    d = dims("Let's meet tomorrow 3pm at the Bund.")
    assert d.occurred_at == datetime(2026, 10, 2, 15, 0, tzinfo=UTC) and d.times == ["15:00"]
    d = dims("下周三上午10点开会")
    assert d.dates == ["2026-10-07"] and d.times == ["10:00"]
    assert d.occurred_at == datetime(2026, 10, 7, 10, 0, tzinfo=UTC)
    assert dims("我喜欢安静一点的酒店").times == []  # 一点 is "a bit", not one o'clock


def test_amounts_are_normalised_to_currency_codes():
    assert dims("My total budget is 5000 RMB, hotel and flights included.").amounts == ["5000 CNY"]
    assert dims("The tour costs 800 EUR or $50 extra, 3,200 GBP in total.").amounts == ["800 EUR", "50 USD",
                                                                                       "3200 GBP"]
    assert dims("共1566元，4000元预算还剩2434元，另有1.5万元备用").amounts == ["1566 CNY", "4000 CNY", "2434 CNY",
                                                                   "15000 CNY"]


def test_numbers_exclude_values_already_typed():
    d = dims("Heads-up: finance exports a whole year at once, that is about 2 million rows on Python 3.12.3.")
    assert d.numbers == ["2000000", "3.12.3"]
    assert dims("My phone number is 138 0013 8000").numbers == []


def test_coding_error_result_paths_identifiers_and_intent():
    text = ("FAILED reports/tests/test_export.py::test_export_has_header_row - AttributeError: This "
            "StreamingHttpResponse instance has no `content` attribute. Use `streaming_content` instead. "
            "1 failed, 2 passed in 1.84s")
    d = dims(text, "tool_result")
    assert d.paths == ["reports/tests/test_export.py"]
    assert {"test_export_has_header_row", "AttributeError", "StreamingHttpResponse",
            "streaming_content"} <= set(d.identifiers)
    assert d.intent == "report_error" and d.sentiment == "negative"
    assert entity_types(d)["reports/tests/test_export.py"] == "file"
    assert dims(text).intent == "report_error"  # also without the interaction kind


def test_urls_paths_and_code_identifiers():
    d = dims("see https://example.com/docs?page=2, then run ./scripts/deploy.sh and edit docs/DEPENDENCIES.md; "
             "SalesReportView uses csv.writer, SOLD_OUT and BG-58213 are codes")
    assert d.urls == ["https://example.com/docs?page=2"]
    assert d.paths == ["./scripts/deploy.sh", "docs/DEPENDENCIES.md"]
    assert {"SalesReportView", "csv.writer", "SOLD_OUT", "BG-58213"} <= set(d.identifiers)
    assert entity_types(d)["https://example.com/docs?page=2"] == "other"
    assert "RMB/night" not in dims("720 RMB/night, 6 min walk").paths


def test_chinese_tool_call():
    d = dims('write_file(path="app/auth/ratelimit.py", change="新增 LoginRateLimiter：hit_ip()、register_failure()，'
             'Redis 异常时放行并记日志")', "tool_call")
    assert d.intent == "act"
    assert d.paths == ["app/auth/ratelimit.py"]
    assert {"write_file", "LoginRateLimiter", "hit_ip", "register_failure"} <= set(d.identifiers)
    assert entity_types(d) == {"app/auth/ratelimit.py": "file", "LoginRateLimiter": "concept", "Redis": "product"}


# --- entities -------------------------------------------------------------------------------------------

def test_english_entity_types_by_head_word_and_lexicon():
    d = dims("3 hotels found: (1) Bund Garden Hotel, 720 RMB/night, 6 min walk to the Bund; the Bank of China "
             "branch is near Pudong Airport. Tom Hughes works at Microsoft in London.")
    types = entity_types(d)
    assert types["Bund Garden Hotel"] == "place" and types["Bund"] == "place"
    assert types["Bank of China"] == "organization" and types["Microsoft"] == "organization"
    assert types["Pudong Airport"] == "place" and types["London"] == "place"
    assert types["Tom Hughes"] == "person"


def test_products_in_code_context():
    d = dims("pandas or django-import-export would be quick, but the dependency policy forbids new packages, "
             "so I will use the stdlib csv module with Django and Redis.")
    assert entity_types(d) == {"pandas": "product", "django-import-export": "product", "csv": "product",
                               "Django": "product", "Redis": "product"}


def test_no_junk_entities_from_sentence_initial_words():
    d = dims("Please book the Bund Garden Hotel. The hotel is quiet. I prefer it. Booking failed: SOLD_OUT. "
             "Heads-up: Decision pending. Wrote nothing. Sorry, Please retry.")
    names = {e.name for e in d.entities}
    assert names == {"Bund Garden Hotel"}


def test_a_capitalised_word_opening_a_sentence_is_only_a_tentative_name():
    d = dims("Tom: Dale says it's the clutch. Sorry about the wait.")
    assert "Dale" not in {e.name for e in d.entities}
    assert {e.name for e in d.tentative_entities} >= {"Dale"}
    assert "tentative_entities" not in d.to_json(), "the pipeline settles them; they are not stored"
    confirmed = dims("Tom: Dale says it's the clutch, and Dale is never wrong.")
    assert "Dale" in {e.name for e in confirmed.entities} and "Dale" not in {
        e.name for e in confirmed.tentative_entities}


def test_chinese_entities_from_jieba_tags():
    types = entity_types(dims("小明明天要去北京见张伟，他在阿里巴巴集团工作。"))
    assert types == {"小明": "person", "北京": "place", "张伟": "person", "阿里巴巴集团": "organization"}
    types = entity_types(dims("找到3家酒店：(1) 湖畔雅居，每晚650元，园景房安静，步行3分钟到西湖；(2) 西溪客栈"))
    assert types == {"湖畔雅居": "place", "西湖": "place", "西溪客栈": "place"}
    assert dims("我对海鲜过敏，园景房很安静，临街房间较吵").entities == []  # mis-tagged common words
    assert entity_types(dims('train_search(origin="上海虹桥", destination="杭州东")'))["上海虹桥"] == "place"
    # jieba tags some places and venues as names; none of them is a person, real names still are
    assert entity_types(dims("蓝月谷门票和电瓶车已预订：7 月 15 日，4 人共 320 元。")) == {"蓝月谷": "place"}
    assert "person" not in entity_types(dims("(3) 雪山芒果小馆，主打芒果糯米饭。")).values()
    assert entity_types(dims("陈先生、卢振鹏和小敏明天见。")) == {
        "陈先生": "person", "卢振鹏": "person", "小敏": "person"}
    # …and glues a verb or 家 ("home") to a name: the person is the name without it
    assert entity_types(dims("老葛说下周要考试")) == {"老葛": "person"}
    assert entity_types(dims("我去陈昊家吃饭")) == {"陈昊": "person"}
    assert dims("后防撞梁需更换").entities == []


def test_a_name_introduced_or_greeted_is_a_person_whatever_the_first_name():
    for text in ("Hi, this is Kenji Sato. I need a hotel in Bologna.", "Hello, Kenji Sato again. A flight, please.",
                 "Kenji Sato here. I'm allergic to shellfish.", "I'm Kenji Sato, the organiser."):
        assert entity_types(dims(text))["Kenji Sato"] == "person", text
    assert entity_types(dims("Weather Service: heavy rain expected tonight."))["Weather Service"] != "person"


def test_entities_are_deduplicated_and_normalised():
    d = dims("Ｒｅｄｉｓ is fast. We keep   Redis. Booking confirmed: Bund  Garden Hotel, bund garden hotel again.")
    by_name = {e.name: e for e in d.entities}
    assert by_name["Redis"].surface == "Ｒｅｄｉｓ" and by_name["Redis"].normalized == "redis"
    assert by_name["Bund Garden Hotel"].normalized == "bund garden hotel"
    assert len([e for e in d.entities if e.normalized == "redis"]) == 1


# --- attributes -----------------------------------------------------------------------------------------

def test_new_phone_number_has_the_same_key_and_a_new_value():
    old = dims('hotel_book(hotel_id="bund-garden", check_in="2025-10-12", contact_phone="+86 138 0013 8000")',
               "tool_call")
    new = dims("By the way, my phone number has changed: it is now +86 139 1122 3344. Please use it instead of "
               "the old one everywhere.", "user_input")
    assert attrs(old) >= {("user", "phone", "+8613800138000")}
    assert attrs(new) == {("user", "phone", "+8613911223344")}
    assert dims("My phone number is 138 0013 8000").attributes == [AttributeValue("user", "phone", "+8613800138000")]
    # A written country code wins over the shape of a Chinese mobile ("+1 555 …" has 11 digits starting 15).
    assert attrs(dims("You can reach me on +1 555 100 8920.")) == {("user", "phone", "+15551008920")}


def test_new_phone_number_in_chinese():
    old = dims("我的电话是138 0013 8000")
    new = dims("对了，我的手机号换了，新号码是139 1122 3344，以后都用这个新号码，旧号码不要再用了。")
    (before,), (after,) = old.attributes, new.attributes
    assert (before.entity, before.attribute) == (after.entity, after.attribute) == ("user", "phone")
    assert before.value == "+8613800138000" and after.value == "+8613911223344"


@pytest.mark.parametrize(("text", "value"), [
    ("Tom: my number's 07700 900316 if the garage needs me.", "07700900316"),
    ("You can call the office on 020-7946-0958.", "02079460958"),
])
def test_a_number_in_national_format_is_a_phone(text, value):
    found = dims(text)
    assert ("user", "phone", value) in attrs(found) and found.numbers == []


@pytest.mark.parametrize("text", [
    "Raj: His new number is 0117 496 0734. The old one goes to a call centre.",
    "Her mobile is 07700 900845, text before calling.",
    "小敏：他的新手机号是139 1122 3344",
    "她的电话是138 0013 8000",
])
def test_someone_elses_number_is_never_the_users(text):
    """"His number" is not the speaker's: kept as the user's, it replaced the user's own number."""
    found = dims(text)
    assert found.numbers == [] and not [a for a in found.attributes if a.attribute == "phone"]


def test_his_number_belongs_to_the_person_named_before_it():
    assert attrs(dims("I met my friend Dale at the garage. His number is 07700 900123, he can fix the car.")) == {
        ("dale", "phone", "07700900123")}
    assert attrs(dims("昨天见到了小王。他的手机是139 1122 3344")) == {("小王", "phone", "+8613911223344")}
    assert attrs(dims("Maria: Her number is 07700 900123.")) == set(), "the speaker is not who 'her' is"
    assert attrs(dims("其他号码都停了，我的手机是139 1122 3344")) == {("user", "phone", "+8613911223344")}


def test_his_number_belongs_to_the_person_the_turns_before_named():
    """In a conversation the person is often named a turn or two earlier ("Mum has a new mobile." /
    "Her new number's …"); the speakers of those turns are who talks, not who is meant."""
    def owner_of(text: str, *earlier: str) -> set[tuple[str, str, str]]:
        return attrs(extract_dimensions(text, now=NOW, earlier=lambda: earlier))

    her = "Nadia: That one. Her new number's 07700 900733."
    assert owner_of(her, "Nadia: Also, Mum has a new mobile.", "Felix: The cracked one?") == {
        ("mother", "phone", "07700900733")}
    assert owner_of("Raj: His number's 0117 496 0182.", "Tom: Gary from number 12 is selling his van.") == {
        ("gary", "phone", "01174960182")}
    assert owner_of("阿杰：他的手机是139 1122 3344", "小林：昨天见到了小王") == {("小王", "phone", "+8613911223344")}
    assert owner_of(her, "Felix: Okay.", "Nadia: Sure.") == set(), "no one named: the value is not kept"
    assert owner_of("Raj: His number's 0117 496 0182.", "Tom: Raj, listen.") == set(), "Raj speaks: not 'his'"
    assert owner_of(her) == owner_of(her, "Mum rang.") - {("mother", "phone", "07700900733")} == set()


@pytest.mark.parametrize("text", ["Order 0123 4567 has shipped.", "Reference 01234-5678-9012, version 0.12 345."])
def test_short_or_long_zero_led_groups_are_no_phone(text):
    assert not [a for a in dims(text).attributes if a.attribute == "phone"]


def test_a_change_from_one_number_to_another_keeps_only_the_new_one():
    assert attrs(dims("Please change my number from 138 0013 8000 to 139 1234 5678")) == {
        ("user", "phone", "+8613912345678")}
    assert attrs(dims("把手机号从138 0013 8000改为139 1234 5678")) == {("user", "phone", "+8613912345678")}
    assert dims("Call 138 0013 8000 or 139 1234 5678").attributes == []  # ambiguous: no attribute at all


def test_allergy_has_one_key_in_both_languages():
    en = dims("Important: I am allergic to seafood, so every restaurant you suggest must avoid fish and shellfish.")
    zh = dims("特别提醒：我对海鲜过敏，推荐的餐厅都不能有鱼虾蟹之类的菜。")
    assert en.attributes == [AttributeValue("user", "allergy", "seafood")]
    assert zh.attributes == [AttributeValue("user", "allergy", "海鲜")]
    assert attrs(dims("我对海鲜过敏")) == {("user", "allergy", "海鲜")}
    assert attrs(dims("Maya has a severe peanut allergy.")) == {("maya", "allergy", "peanut")}
    assert attrs(dims("小明对花生过敏")) == {("小明", "allergy", "花生")}
    assert attrs(dims("I'm allergic to peanuts and shellfish.")) == {("user", "allergy", "peanut"),
                                                                    ("user", "allergy", "shellfish")}
    assert dims("I am not allergic to nuts.").attributes == []
    assert dims("我对海鲜不过敏").attributes == []


def test_family_members_own_their_attributes():
    assert attrs(dims("另外儿子对花生和芒果过敏，吃饭的时候一定要特别注意。")) == {("child", "allergy", "花生"),
                                                                ("child", "allergy", "芒果")}
    assert attrs(dims("孩子花生、芒果过敏。")) == {("child", "allergy", "花生"), ("child", "allergy", "芒果")}
    assert attrs(dims("My son is allergic to peanuts")) == {("child", "allergy", "peanut")}
    assert attrs(dims("my wife's phone is 139 1234 5678")) == {("spouse", "phone", "+8613912345678")}
    assert "allergy" in MULTI_VALUED and "phone" not in MULTI_VALUED


def test_sub_budgets_and_what_is_left_are_not_the_budget():
    assert dims("抽奖奖品预算 3 万元，一等奖是一台 MacBook Air。").attributes == []
    assert dims("汇总：18:00 开场，预算还剩 34,220 元。").attributes == []
    spent = dims("目前支出：奖品 3 万元 = 115,780 元，15 万元预算还剩 34,220 元")
    assert attrs(spent) == {("user", "budget", "150000 CNY")}
    assert attrs(dims("The food budget is 500 EUR but our total budget is 3,200 GBP.")) == {
        ("user", "budget", "3200 GBP")}


def test_budget_trip_dates_hotel_and_deadline_attributes():
    assert ("user", "budget", "5000 CNY") in attrs(dims("My total budget is 5000 RMB, hotel and flights included."))
    assert ("user", "budget", "4000 CNY") in attrs(dims("共1566元，4000元预算还剩2434元。"))
    first = attrs(dims("Please plan a 3-day trip to Shanghai for me, 12 to 14 October."))
    moved = attrs(dims("Yes, let's move the whole trip to 19-21 October instead."))
    assert ("user", "date", "2026-10-12/2026-10-14") in first and ("user", "date", "2026-10-19/2026-10-21") in moved
    assert ("user", "date", "2026-10-19/2026-10-21") in attrs(dims("那就改期吧，整个行程改到10月19日到21日。"))
    assert ("user", "hotel", "bund garden hotel") in attrs(dims("Booking confirmed: Bund Garden Hotel, 19-21 October"))
    assert ("user", "hotel", "湖畔雅居") in attrs(dims("预订成功：湖畔雅居，10月19日至21日，安静园景房，共1300元。"))
    assert not any(a.attribute == "hotel" for a in dims(
        "Booking failed: SOLD_OUT. Bund Garden Hotel has no rooms left for 12-14 October.").attributes)
    assert ("user", "deadline", "2026-11-05T17:00") in attrs(dims("截止日期是11月5日下午5点"))
    assert ("user", "deadline", "2026-11-05") in attrs(dims("The report is due on 5 November."))
    assert not any(a.attribute == "deadline" for a in dims(  # "due to" gives a cause, not a date
        "Heavy rain expected on 5 November due to a storm front; allow extra time for taxis.").attributes)
    assert ("user", "email", "jane.doe@example.org") in attrs(dims("My email is Jane.Doe@example.org"))
    assert ("user", "check_in", "2025-10-19") in attrs(dims('hotel_book(check_in="2025-10-19")', "tool_call"))
    assert {a.attribute for a in dims("My total budget is 5000 RMB").attributes} <= set(ATTRIBUTES)


# --- intent, sentiment, subjectivity --------------------------------------------------------------------

@pytest.mark.parametrize(("text", "kind", "expected"), [
    ("Decided to use the csv module", None, "decide"),
    ("决定使用 Redis", None, "decide"),
    ("Decision: I will build the export with Python's built-in csv module.", "assistant_output", "decide"),
    ("Booking failed: SOLD_OUT. Bund Garden Hotel has no rooms left.", "tool_result", "report_error"),
    ("预订失败：满房。湖畔雅居10月12日至14日已无空房。", "tool_result", "report_error"),
    ("Wrote reports/views.py (+41 lines) and routed sales/export.csv.", "tool_result", "report_result"),
    ("reports: 17 passed, 0 failed in 3.02s", "tool_result", "report_result"),
    ('read_file(path="reports/views.py")', "tool_call", "act"),
    ("Shall I book it for 12-14 October?", "assistant_output", "question"),
    ("如果 Redis 挂了怎么办？", "user_input", "question"),
    ("Hi! Please plan a 3-day trip to Shanghai for me.", "user_input", "request"),
    ("给 Flask 项目的登录接口 /auth/login 加上登录限流", "user_input", "request"),
    ("I am allergic to seafood, every restaurant must avoid fish.", "user_input", "constrain"),
    ("I prefer a quiet hotel near the Bund.", "user_input", "prefer"),
    ("Before searching hotels I should ask where the traveller wants to stay.", "agent_thought", "plan"),
    ("Done: GET /reports/sales/export.csv streams the filtered rows.", "assistant_output", "report_result"),
    ("Heads-up: finance exports a whole year at once, that is about 2 million rows.", "user_input", "inform"),
    ("ok", "user_input", "chit_chat"),
    ("谢谢", "user_input", "chit_chat"),
    ("Great, thank you so much!", "user_input", "chit_chat"),
])
def test_intent(text, kind, expected):
    assert dims(text, kind).intent == expected
    assert expected in INTENTS


@pytest.mark.parametrize(("text", "sentiment"), [
    ("The new hotel is great and the staff are very helpful!", "positive"),
    ("The room was noisy and dirty.", "negative"),
    ("The breakfast was not good.", "negative"),
    ("No problem at all.", "positive"),
    ("Sorry, the Bund Garden Hotel is sold out for 12-14 October.", "negative"),
    ("我很满意，这家酒店很干净。", "positive"),
    ("我对这家酒店不满意，房间太吵了。", "negative"),
    ("The hotel is on Nanjing Road, 6 minutes from the Bund.", "neutral"),
    ("你好，帮我规划一次杭州三日游。", "neutral"),
])
def test_sentiment(text, sentiment):
    assert dims(text).sentiment == sentiment


def test_subjectivity():
    assert dims("I think the Bund Garden Hotel is the best choice.").subjectivity == "subjective"
    assert dims("我觉得这家酒店太吵了").subjectivity == "subjective"
    assert dims("Booking confirmed: Bund Garden Hotel, 19-21 October.", "tool_result").subjectivity == "objective"
    assert dims("Two nights cost 1440 RMB.").subjectivity == "objective"


def test_topics_and_keywords():
    d = dims("Please plan a 3-day trip to Shanghai for me, 12 to 14 October. My total budget is 5000 RMB.")
    assert {"travel", "budget"} <= set(d.topics) and "shanghai" in d.keywords
    zh = dims("湖畔雅居最符合要求：安静、紧挨西湖，两晚1300元，剩余约2700元用于交通、餐饮和门票。")
    assert "雅居" in zh.keywords and "西湖" in zh.keywords and 1 <= len(zh.topics) <= 5
    assert dims("ok").keywords == [] and dims("ok").topics == []


# --- time validity --------------------------------------------------------------------------------------

def test_valid_until():
    parcel = dims("The parcel arrives tomorrow afternoon.")
    assert parcel.occurred_at == datetime(2026, 10, 2, 12, 0, tzinfo=UTC)
    assert parcel.valid_until == datetime(2026, 10, 2, 18, 0, tzinfo=UTC)
    assert dims("快递预计明天下午送达").valid_until == datetime(2026, 10, 2, 18, 0, tzinfo=UTC)
    assert dims("This voucher is valid until 5 Nov.").valid_until == datetime(2026, 11, 5, 23, 59, 59, tzinfo=UTC)
    assert dims("这张优惠券今晚有效").valid_until == datetime(2026, 10, 1, 23, 59, 59, tzinfo=UTC)
    assert dims("Booking confirmed: Bund Garden Hotel, 19-21 October.").valid_until is None
    assert dims("The hotel was great yesterday.").valid_until is None


# --- records --------------------------------------------------------------------------------------------

def test_to_json_round_trips():
    d = dims("By the way, my phone number has changed: it is now +86 139 1122 3344. The parcel arrives tomorrow "
             "afternoon at the Bund Garden Hotel; 我对海鲜过敏。")
    data = d.to_json()
    assert json.loads(json.dumps(data, ensure_ascii=False)) == data
    assert data["occurred_at"] == "2026-10-02T12:00:00+00:00" and data["valid_until"] == "2026-10-02T18:00:00+00:00"
    assert {"entity": "user", "attribute": "phone", "value": "+8613911223344"} in data["attributes"]
    assert {"surface", "name", "normalized", "type"} == set(data["entities"][0])
    assert set(data) == {f.name for f in dataclasses.fields(Dimensions)} - {"tentative_entities"}


def test_records_are_frozen():
    d = dims("My phone number is 138 0013 8000")
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.intent = "question"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.attributes[0].value = "x"  # type: ignore[misc]


def test_every_demo_interaction_extracts_valid_dimensions():
    files = sorted(DEMO_DATA.glob("*.json"))
    assert len(files) == 4
    for path in files:
        scenario = json.loads(path.read_text(encoding="utf-8"))
        for item in scenario["interactions"]:
            d = extract_dimensions(item["content"], now=NOW, kind=item["kind"])
            assert d.intent in INTENTS
            assert d.sentiment in {"positive", "negative", "neutral"}
            assert d.subjectivity in {"subjective", "objective"}
            assert {e.type for e in d.entities} <= ENTITY_TYPES
            assert all(a.attribute in ATTRIBUTES for a in d.attributes)
            if item["kind"] in ("user_input", "assistant_output", "agent_thought") and len(item["content"]) > 8:
                assert d.language == scenario["language"], item["content"]
            json.dumps(d.to_json(), ensure_ascii=False)


def test_extraction_is_fast():
    warm_up()
    english = ("Hi! Please plan a 3-day trip to Shanghai for me, 12 to 14 October, flying from Beijing. My total "
               "budget is 5000 RMB, hotel and flights included. I am allergic to seafood.")
    chinese = ("你好，帮我规划一次杭州三日游，10月12日到14日，从上海坐高铁过去。总预算4000元，包括住宿和交通。"
               "特别提醒：我对海鲜过敏，推荐的餐厅都不能有鱼虾蟹之类的菜，最好在西湖边，每晚不超过700元。")
    for text, budget_ms in ((english, 10.0), (chinese, 25.0)):
        extract_dimensions(text, now=NOW)
        start = time.perf_counter()
        for i in range(20):
            extract_dimensions(text + " " * i, now=NOW)  # distinct texts: no tagging cache hits
        assert (time.perf_counter() - start) / 20 * 1000 < budget_ms


def test_chinese_numerals_with_a_magnitude_are_numbers():
    assert dims("学费问清楚了，一学期两万六，不含午餐").numbers == ["26000"]
    assert dims("现在要四万六，多出来的六千全是水电").numbers == ["46000", "6000"]
    assert dims("等额本息大概九千四，首付十二万，装修三千五百").numbers == ["9400", "120000", "3500"]
    # words, not values: bare numerals, 万一 ("in case"), 千万 ("by all means")
    assert dims("万一下雨就改天，千万别忘了带伞，两天一晚，三周后，多花了一万多").numbers == []
