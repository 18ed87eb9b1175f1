"""Values that are secret by their structure alone, with no name before them: a BitLocker recovery password
as manage-bde prints it, a ZeroTier identity's secret; and numbers of the same look that are not.
(Every value below is made up for the test; the recovery password's groups are multiples of 11.)"""

from __future__ import annotations

from advisor.redact import Redactor

RECOVERY = "-".join(f"{11 * n:06d}" for n in (1234, 5678, 9012, 3456, 7890, 12345, 23456, 34567))


def test_manage_bde_prints_a_recovery_password_that_is_hidden():
    pasted = (
        "    Numerical Password:\n      ID: {00000000-0000-0000-0000-000000000000}\n"
        f"      Password:\n        {RECOVERY}\n"
    )
    clean = Redactor().text(pasted)
    assert RECOVERY not in clean
    assert "Numerical Password:" in clean


def test_digit_groups_that_are_no_recovery_password_stay():
    groups = "123457-222222-333334-444444-555556-666666-777778-888888"  # not every group a multiple of 11
    assert groups in Redactor().text(f"serial groups {groups}")


def test_a_zerotier_identity_keeps_its_address_and_public_half():
    address, public, private = "a1b2c3d4e5", "0f" * 64, "9e" * 64
    clean = Redactor().text(f"{address}:0:{public}:{private}\n")
    assert private not in clean
    assert f"{address}:0:{public}" in clean
