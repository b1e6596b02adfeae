"""Transformer / conv VQ-VAE parts (paper 003): EMA codebook, jitter, strides, losses, inverter."""
import pytest
import torch
from espnet.nets.pytorch_backend.nets_utils import make_pad_mask

from local_models.vqvae.model import (STRIDE, CodebookInverter, EMACodebook, build_vqvae, temporal_jitter,
                                      utterance_mvn)


def test_ema_update_matches_hand_computation():
    cb = EMACodebook(num_codes=3, dim=2, decay=0.5, eps=0.0, dead_count=0.0)
    cb.embed.copy_(torch.tensor([[0.0, 0.0], [10.0, 10.0], [-10.0, 0.0]]))
    cb.ema_weight.copy_(cb.embed)
    cb.ema_count.fill_(1.0)
    z = torch.tensor([[[1.0, 1.0], [-1.0, 1.0], [9.0, 11.0], [100.0, 100.0]]])  # last frame is padding
    mask = torch.tensor([[True, True, True, False]])
    codes = cb.nearest(z)
    assert codes[0, :3].tolist() == [0, 0, 1]
    cb.ema_update(z, codes, mask)
    # counts: N = 0.5 * 1 + 0.5 * [2, 1, 0] = [1.5, 1.0, 0.5]
    assert torch.allclose(cb.ema_count, torch.tensor([1.5, 1.0, 0.5]))
    # weights: m = 0.5 * e_old + 0.5 * sum z: code 0 -> 0.5 * [0, 2] = [0, 1]; code 1 -> 0.5*[10,10] + 0.5*[9,11]
    want_w = torch.tensor([[0.0, 1.0], [9.5, 10.5], [-5.0, 0.0]])
    assert torch.allclose(cb.ema_weight, want_w)
    # eps = 0: no smoothing, e = m / N
    assert torch.allclose(cb.embed, want_w / torch.tensor([1.5, 1.0, 0.5])[:, None])


def test_dead_codes_restart_at_encoder_outputs():
    torch.manual_seed(0)
    cb = EMACodebook(num_codes=4, dim=2, decay=0.5, dead_count=0.8)
    z = torch.randn(1, 50, 2) + 5.0
    mask = torch.ones(1, 50, dtype=torch.bool)
    cb.init_from(z, mask)
    # codes start at (noisy copies of) encoder outputs: each within the 1e-3 noise of one frame
    assert bool(cb.initialised) and (torch.cdist(cb.embed, z[0]).min(1).values < 1e-2).all()
    z2 = torch.zeros(1, 50, 2)
    cb.ema_update(z2, torch.zeros(1, 50, dtype=torch.long), mask)
    # codes 1..3 got no frames: counts 0.5 < 0.8 -> restarted at (noisy) copies of z2 rows
    assert torch.allclose(cb.embed[1:], torch.zeros(3, 2), atol=1e-2) and (cb.ema_count[1:] == 1).all()


def test_ema_laplace_smoothing_by_hand():
    """Unused codes (count 0, no restart) stay at 0 instead of 0 / 0; a used code is its frames' sum over the
    Laplace-smoothed count (N_k + eps) / (n + K eps) * n."""
    cb = EMACodebook(num_codes=4, dim=2, decay=0.0, eps=0.1, dead_count=0.0)
    z = torch.full((1, 5, 2), 2.0)
    cb.ema_update(z, torch.zeros(1, 5, dtype=torch.long), torch.ones(1, 5, dtype=torch.bool))
    smoothed = (5 + 0.1) / (5 + 4 * 0.1) * 5
    assert torch.allclose(cb.embed[0], torch.full((2,), 10.0 / smoothed))
    assert torch.equal(cb.embed[1:], torch.zeros(3, 2))


def test_espnet_masks_equal_the_replaced_hand_written_ones():
    """model.py / task.py use ~make_pad_mask(lengths, maxlen=T) where a hand-written lengths_to_mask
    (arange(T) < length) was: same values, dtype and device for lengths 1..T (every length the models pass)."""
    g = torch.Generator().manual_seed(0)
    for _ in range(50):
        B = int(torch.randint(1, 6, (1,), generator=g))
        lengths = torch.randint(1, 40, (B,), generator=g)
        T = int(lengths.max()) + int(torch.randint(0, 5, (1,), generator=g))
        old = torch.arange(T, device=lengths.device)[None, :] < lengths[:, None]
        new = ~make_pad_mask(lengths, maxlen=T)
        assert new.dtype == old.dtype == torch.bool and new.device == lengths.device and torch.equal(new, old)


def test_jitter_takes_codes_from_neighbours_only():
    g = torch.Generator().manual_seed(0)
    codes = torch.arange(200).repeat(8, 1)  # every position has a distinct code
    lengths = torch.tensor([200, 150, 3, 1, 200, 200, 50, 2])
    out = temporal_jitter(codes, lengths, 0.3, generator=g)
    shift = out - codes
    assert set(shift.unique().tolist()) <= {-1, 0, 1}
    valid = ~make_pad_mask(lengths, maxlen=200)
    assert (shift[:, 0] != -1).all()  # no left neighbour for the first frame
    last = lengths - 1
    assert (shift[torch.arange(8), last] != 1).all()  # never beyond the utterance end
    frac = (shift[valid] != 0).float().mean().item()
    assert 0.5 < frac < 0.65  # 2p = 0.6, minus the edges that keep their code
    assert torch.equal(temporal_jitter(codes, lengths, 0.0), codes)


@pytest.mark.parametrize("enc", ["transformer", "conv"])
def test_vqvae_stride_lengths_and_gradients(enc):
    torch.manual_seed(0)
    m = build_vqvae(enc, idim=13, num_speakers=3, num_codes=16, code_dim=8, enc_dim=32, heads=2, ff=64,
                    smooth_weight=1e-2, jitter_p=0.05, spk_dim=4, dec_dim=32)
    x = torch.randn(2, 43, 13)
    lengths = torch.tensor([43, 21])
    out = m(x, lengths, torch.tensor([0, 2]))
    out["loss"].backward()
    enc_grad = sum(p.grad.abs().sum() for p in m.encoder.parameters() if p.grad is not None)
    assert enc_grad > 0  # straight-through estimator reaches the encoder
    assert all(p.grad is None for p in m.codebook.parameters())  # EMA, no gradient
    m.eval()
    z, codes, zlen = m.encode(x, lengths)
    assert zlen.tolist() == [43 // STRIDE, 21 // STRIDE] and codes.shape == (2, 43 // STRIDE)
    assert torch.equal(codes, m.codebook.nearest(z))  # each code is its frame's nearest codebook entry


def test_padding_does_not_change_codes():
    torch.manual_seed(0)
    m = build_vqvae("transformer", idim=5, num_speakers=1, num_codes=8, code_dim=4, enc_dim=16, heads=2, ff=32).eval()
    x = torch.randn(1, 24, 5)
    padded = torch.cat([x, 50 * torch.randn(1, 16, 5)], 1)
    _, c1, _ = m.encode(x, torch.tensor([24]))
    _, c2, l2 = m.encode(padded, torch.tensor([24]))
    # the last code's conv window reaches one frame past the end (zeros either way)
    assert torch.equal(c1[0], c2[0, : int(l2[0])])


def test_utterance_mvn_ignores_padding():
    x = torch.tensor([[[1.0], [3.0], [1000.0]]])
    y = utterance_mvn(x, torch.tensor([[True, True, False]]))
    assert torch.allclose(y[0, :2, 0], torch.tensor([-1.0, 1.0]), atol=1e-4) and y[0, 2, 0] == 0


def test_inverter_duplicates_codes_to_frame_rate():
    """STRIDE frames per code; an utterance's frames are the same alone as in a batch beside a longer one, whatever
    its padding holds (the convolutions reach past its end)."""
    torch.manual_seed(0)
    inv = CodebookInverter(code_dim=8, n_bins=33, dim=16, heads=2, ff=32, layers=1).eval()
    e = torch.randn(2, 7, 8)
    e[1, 4:] = 100.0  # padding of the 4-code utterance
    spec, lengths = inv(e, torch.tensor([7, 4]))
    assert spec.shape == (2, 7 * STRIDE, 33) and lengths.tolist() == [28, 16]
    alone, alone_len = inv(e[1:, :4], torch.tensor([4]))
    assert alone_len.tolist() == [16] and torch.allclose(spec[1, :16], alone[0], atol=1e-5)


def test_jitter_probability_is_checked():
    with pytest.raises(ValueError, match="jitter_p"):
        build_vqvae("conv", idim=5, num_speakers=1, jitter_p=0.6)


@pytest.mark.parametrize("pos_enc", [True, False])
def test_encoder_position_codes_only_when_asked(pos_enc):
    """Without position codes the encoder is shift-equivariant: the same frames give the same z wherever they
    sit in the utterance (a unit should not depend on its position); with them, z also encodes the position."""
    torch.manual_seed(0)
    m = build_vqvae("transformer", idim=5, num_speakers=1, num_codes=8, code_dim=4, enc_dim=16, heads=2, ff=32,
                    pos_enc=pos_enc).eval()
    frame = torch.randn(1, 1, 5)
    x = frame.expand(1, 64, 5)  # one frame repeated: interior z is the same everywhere iff no position codes
    z, _ = m.encoder(x, torch.tensor([64]))
    interior = z[0, 2:-2]
    spread = (interior - interior.mean(0)).abs().max()
    assert (spread < 1e-5) == (not pos_enc)


def test_encoder_output_has_no_dead_relu_path():
    """A last strided conv whose outputs are all negative must not make z constant (with a ReLU before the
    output projection it did: one seed of five collapsed onto a single code)."""
    torch.manual_seed(0)
    m = build_vqvae("transformer", idim=5, num_speakers=1, num_codes=8, code_dim=4, enc_dim=16, heads=2,
                    ff=32).eval()
    with torch.no_grad():
        m.encoder.convs[-1].bias.fill_(-1e3)
    z, _ = m.encoder(torch.randn(1, 32, 5), torch.tensor([32]))
    assert z[0].std(0).min() > 1e-3


def test_vq_loss_terms_by_hand():
    """eq. 7 commitment: squared distance of z to its code summed over the code's dimensions, averaged over codes;
    eq. 9 smoothing: squared distance of adjacent z, averaged over pairs within an utterance; the total weighs
    them by commitment and smooth_weight, padding excluded (eval mode: no EMA update, no jitter)."""
    torch.manual_seed(0)
    m = build_vqvae("transformer", idim=5, num_speakers=2, num_codes=8, code_dim=4, enc_dim=16, heads=2, ff=32,
                    commitment=0.3, smooth_weight=0.07, spk_dim=2, dec_dim=16).eval()
    x, lengths = torch.randn(2, 24, 5), torch.tensor([24, 13])
    out = m(x, lengths, torch.tensor([0, 1]))
    z, codes, zlen = m.encode(x, lengths)
    commit, n, smooth, pairs = 0.0, 0, 0.0, 0
    for b in range(2):
        for t in range(int(zlen[b])):
            commit += float(((z[b, t] - m.codebook.embed[codes[b, t]]) ** 2).sum())
            n += 1
            if t + 1 < int(zlen[b]):
                smooth += float(((z[b, t + 1] - z[b, t]) ** 2).sum())
                pairs += 1
    assert float(out["commit"]) == pytest.approx(commit / n, rel=1e-5)
    assert float(out["smooth"]) == pytest.approx(smooth / pairs, rel=1e-5)
    total = float(out["recon"]) + 0.3 * commit / n + 0.07 * smooth / pairs
    assert float(out["loss"]) == pytest.approx(total, rel=1e-5)
