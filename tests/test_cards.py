import pytest

from truco_lab.rules.cards import N_ACTIONS, action_str, card_str, parse_action, parse_card, parse_cards


def test_card_ids_follow_the_notation_contract():
    assert parse_card("4d") == 0
    assert parse_card("3c") == 39
    assert parse_card("Qs") == 4 * 4 + 1
    assert [card_str(i) for i in (0, 1, 2, 3)] == ["4d", "4s", "4h", "4c"]


def test_parse_is_case_insensitive_and_prints_canonically():
    assert card_str(parse_card("qS")) == "Qs"
    assert card_str(parse_card("aH")) == "Ah"
    assert card_str(parse_card(" 3D ")) == "3d"


@pytest.mark.parametrize("bad", ["8c", "10d", "3x", "", "Q", "3dd", "Zs"])
def test_unknown_card_names_the_value_and_the_expectation(bad):
    with pytest.raises(ValueError) as e:
        parse_card(bad)
    assert repr(bad) in str(e.value)
    assert "expected" in str(e.value)


def test_card_dealt_twice_is_rejected():
    with pytest.raises(ValueError, match="'3d' dealt twice"):
        parse_cards("3d Qs 3D")


def test_every_action_id_round_trips_through_its_string():
    for a in range(N_ACTIONS):
        assert parse_action(action_str(a)) == a


def test_action_strings_are_exactly_the_contract():
    assert action_str(parse_action("play_face_up 3d")) == "play_face_up 3d"
    assert action_str(parse_action("play_face_down qs")) == "play_face_down Qs"
    for s in ("raise 3", "raise 6", "raise 9", "raise 12", "accept_raise", "fold", "concede_hand",
              "accept_eleven", "fold_eleven"):
        assert action_str(parse_action(s)) == s


@pytest.mark.parametrize("bad", ["raise 4", "raise", "play_face_up", "play_face_up 9d", "accept", "fold now", "bet 3"])
def test_malformed_action_names_the_value(bad):
    with pytest.raises(ValueError) as e:
        parse_action(bad)
    assert repr(bad) in str(e.value) or "9d" in str(e.value)
