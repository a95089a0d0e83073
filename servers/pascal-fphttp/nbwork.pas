{ The /work endpoint of the netbench contract (contract/CONTRACT.md):
  parse the JSON document with fcl-json (fpjson + jsonparser), check every
  field, parse every date strictly into a millisecond timestamp, and build
  the answer with fpjson. No HTTP here, so the tests can call it directly. }
unit nbwork;

{$mode objfpc}{$H+}

interface

{ Parses `YYYY-MM-DDTHH:MM:SS.sssZ` (exactly 24 characters, a real instant
  of the proleptic Gregorian calendar, no leap second, no 24:00) into
  milliseconds since 1970-01-01T00:00:00.000Z. False for anything else. }
function ParseTimestamp(const S: AnsiString; out Ms: Int64): Boolean;

{ The inverse: milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.sssZ`
  (always three digits of milliseconds). }
function FormatTimestamp(Ms: Int64): AnsiString;

{ Computes the answer to a /work body. True and the JSON answer in Answer,
  or False when the body must be refused with 400 (Answer then says why). }
function ComputeWork(const Body: AnsiString; out Answer: AnsiString): Boolean;

implementation

uses
  SysUtils, fpjson, jsonscanner, jsonparser;

const
  MsPerDay = Int64(86400000);

function IsLeap(Y: Integer): Boolean; inline;
begin
  Result := ((Y mod 4) = 0) and (((Y mod 100) <> 0) or ((Y mod 400) = 0));
end;

function DaysInMonth(Y, M: Integer): Integer;
const
  Days: array[1..12] of Integer = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31);
begin
  Result := Days[M];
  if (M = 2) and IsLeap(Y) then
    Result := 29;
end;

{ Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
  days_from_civil). }
function DaysFromCivil(Y, M, D: Int64): Int64;
var
  Era, Yoe, Doy, Doe: Int64;
begin
  if M <= 2 then
    Dec(Y);
  if Y >= 0 then
    Era := Y div 400
  else
    Era := (Y - 399) div 400;
  Yoe := Y - Era * 400;
  if M > 2 then
    Doy := (153 * (M - 3) + 2) div 5 + D - 1
  else
    Doy := (153 * (M + 9) + 2) div 5 + D - 1;
  Doe := Yoe * 365 + Yoe div 4 - Yoe div 100 + Doy;
  Result := Era * 146097 + Doe - 719468;
end;

procedure CivilFromDays(Z: Int64; out Y, M, D: Int64);
var
  Era, Doe, Yoe, Doy, Mp: Int64;
begin
  Z := Z + 719468;
  if Z >= 0 then
    Era := Z div 146097
  else
    Era := (Z - 146096) div 146097;
  Doe := Z - Era * 146097;
  Yoe := (Doe - Doe div 1460 + Doe div 36524 - Doe div 146096) div 365;
  Y := Yoe + Era * 400;
  Doy := Doe - (365 * Yoe + Yoe div 4 - Yoe div 100);
  Mp := (5 * Doy + 2) div 153;
  D := Doy - (153 * Mp + 2) div 5 + 1;
  if Mp < 10 then
    M := Mp + 3
  else
    M := Mp - 9;
  if M <= 2 then
    Inc(Y);
end;

function ParseTimestamp(const S: AnsiString; out Ms: Int64): Boolean;

  { The number in S[From..From+Len-1]; -1 unless every character is 0-9. }
  function Digits(From, Len: Integer): Integer;
  var
    I: Integer;
  begin
    Result := 0;
    for I := From to From + Len - 1 do
    begin
      if not (S[I] in ['0'..'9']) then
        Exit(-1);
      Result := Result * 10 + (Ord(S[I]) - Ord('0'));
    end;
  end;

var
  Y, Mo, D, H, Mi, Se, Milli: Integer;
begin
  Ms := 0;
  Result := False;
  // YYYY-MM-DDTHH:MM:SS.sssZ
  // 123456789012345678901234
  if Length(S) <> 24 then
    Exit;
  if (S[5] <> '-') or (S[8] <> '-') or (S[11] <> 'T') or (S[14] <> ':')
    or (S[17] <> ':') or (S[20] <> '.') or (S[24] <> 'Z') then
    Exit;
  Y := Digits(1, 4);
  Mo := Digits(6, 2);
  D := Digits(9, 2);
  H := Digits(12, 2);
  Mi := Digits(15, 2);
  Se := Digits(18, 2);
  Milli := Digits(21, 3);
  if (Y < 0) or (Mo < 1) or (Mo > 12) or (D < 1) or (H < 0) or (H > 23)
    or (Mi < 0) or (Mi > 59) or (Se < 0) or (Se > 59) or (Milli < 0) then
    Exit;
  if D > DaysInMonth(Y, Mo) then
    Exit;
  Ms := DaysFromCivil(Y, Mo, D) * MsPerDay
    + ((Int64(H) * 60 + Mi) * 60 + Se) * 1000 + Milli;
  Result := True;
end;

function Pad(V: Int64; Width: Integer): AnsiString;
begin
  Result := IntToStr(V);
  while Length(Result) < Width do
    Result := '0' + Result;
end;

function FormatTimestamp(Ms: Int64): AnsiString;
var
  Days, Rest, Y, M, D: Int64;
begin
  if Ms >= 0 then
    Days := Ms div MsPerDay
  else
    Days := -((-Ms + MsPerDay - 1) div MsPerDay);
  Rest := Ms - Days * MsPerDay;
  CivilFromDays(Days, Y, M, D);
  Result := Pad(Y, 4) + '-' + Pad(M, 2) + '-' + Pad(D, 2) + 'T'
    + Pad(Rest div 3600000, 2) + ':' + Pad((Rest div 60000) mod 60, 2) + ':'
    + Pad((Rest div 1000) mod 60, 2) + '.' + Pad(Rest mod 1000, 3) + 'Z';
end;

{ The member Name of Obj when it is present, not null and of type T. }
function Member(Obj: TJSONObject; const Name: AnsiString; T: TJSONtype;
  out Value: TJSONData; var Why: AnsiString): Boolean;
begin
  Value := Obj.Find(Name);
  Result := (Value <> nil) and (Value.JSONType = T);
  if not Result then
    if (Value = nil) or (Value.JSONType = jtNull) then
      Why := 'missing field ' + Name
    else
      Why := 'wrong type for ' + Name;
end;

function ComputeWork(const Body: AnsiString; out Answer: AnsiString): Boolean;
var
  Parser: TJSONParser;
  Doc, Product, RequestId, GroupData, Kind, IsDefault, Balance, DatesData,
    Item: TJSONData;
  Group: TJSONObject;
  Dates: TJSONArray;
  Ans, Client: TJSONObject;
  I: Integer;
  T, MinT, MaxT: Int64;
  Why: AnsiString;
begin
  Result := False;
  Answer := '';
  Why := '';
  Doc := nil;
  Parser := TJSONParser.Create(Body, [joUTF8, joStrict]);
  try
    try
      Doc := Parser.Parse;
    except
      on E: Exception do
      begin
        Answer := 'not JSON: ' + E.Message;
        Exit;
      end;
    end;
  finally
    Parser.Free;
  end;
  try
    if (Doc = nil) or (Doc.JSONType <> jtObject) then
    begin
      Answer := 'not a JSON object';
      Exit;
    end;
    if not (Member(TJSONObject(Doc), 'product', jtString, Product, Why)
      and Member(TJSONObject(Doc), 'requestId', jtString, RequestId, Why)
      and Member(TJSONObject(Doc), 'group', jtObject, GroupData, Why)) then
    begin
      Answer := Why;
      Exit;
    end;
    Group := TJSONObject(GroupData);
    if not (Member(Group, 'kind', jtString, Kind, Why)
      and Member(Group, 'default', jtBoolean, IsDefault, Why)
      and Member(Group, 'balance', jtNumber, Balance, Why)
      and Member(Group, 'dates', jtArray, DatesData, Why)) then
    begin
      Answer := Why;
      Exit;
    end;
    Dates := TJSONArray(DatesData);
    if Dates.Count = 0 then
    begin
      Answer := 'empty dates';
      Exit;
    end;
    MinT := High(Int64);
    MaxT := Low(Int64);
    for I := 0 to Dates.Count - 1 do
    begin
      Item := Dates.Items[I];
      if (Item.JSONType <> jtString) or not ParseTimestamp(Item.AsString, T) then
      begin
        Answer := 'invalid date at index ' + IntToStr(I);
        Exit;
      end;
      if T < MinT then
        MinT := T;
      if T > MaxT then
        MaxT := T;
    end;
    Client := TJSONObject.Create;
    Client.Add('balance', Balance.Clone);
    Client.Add('minDate', FormatTimestamp(MinT));
    Client.Add('maxDate', FormatTimestamp(MaxT));
    Ans := TJSONObject.Create;
    try
      Ans.Add('product', Product.AsString);
      Ans.Add('requestId', RequestId.AsString);
      Ans.Add('client', Client);
      Answer := Ans.AsJSON;
    finally
      Ans.Free;
    end;
    Result := True;
  finally
    Doc.Free;
  end;
end;

initialization
  // Compact output: {"product":"p",...} instead of { "product" : "p", ... }.
  TJSONData.CompressedJSON := True;
end.
